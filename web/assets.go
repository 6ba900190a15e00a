package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// assets are the dashboard's files, served at / (no CDN: offline).
//
//go:embed assets
var assets embed.FS

func (s *Server) routeAssets() {
	sub, err := fs.Sub(assets, "assets")
	if err != nil { // the embedded tree always has it
		sub = assets
	}
	files := http.FileServerFS(sub)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
