package main

import "net/http"

// newExplorer returns the web explorer's handler.
func newExplorer(cfg *toolsConfig) http.Handler {
	return http.NotFoundHandler()
}
