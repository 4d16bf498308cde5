package cli

import (
	"net/http"

	"github.com/localtable/localtable/internal/explorer"
)

// newExplorer returns the web explorer over the served accounts, behind
// the same keys (see package explorer).
func newExplorer(cfg *toolsConfig) http.Handler {
	var accts []explorer.Account
	for _, a := range cfg.accounts {
		accts = append(accts, explorer.Account{Name: a.Name, Key: a.Key, Data: a.Account})
	}
	return explorer.New(explorer.Options{Accounts: accts, NoAuth: cfg.noAuth, Prefix: explorerPrefix, Logger: cfg.log})
}
