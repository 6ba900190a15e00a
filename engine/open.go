package engine

import (
	"github.com/streamsql/streamsql/pgerr"
	"github.com/streamsql/streamsql/storage"
)

// openCatalog opens the persisted catalog.
func openCatalog(dir string, store *storage.Store) (Catalog, error) {
	return nil, pgerr.Internal("catalog not available yet")
}
