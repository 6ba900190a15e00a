package engine

import (
	"github.com/streamsql/streamsql/catalog"
	"github.com/streamsql/streamsql/storage"
)

// openCatalog opens the persisted catalog over the store.
func openCatalog(dir string, store *storage.Store) (Catalog, error) {
	return catalog.Open(dir, store)
}
