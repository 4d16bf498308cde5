package server

import "strings"

// ConnectionString returns the connection string the Azure SDKs accept for
// a table endpoint such as http://127.0.0.1:10002/devstoreaccount1 (not
// UseDevelopmentStorage=true, which aztables rejects). When the endpoint
// is path-style (its path is /account), the string also names the
// read-only secondary endpoint, TableSecondaryEndpoint=…/account-secondary.
func ConnectionString(tableEndpoint, account, base64Key string) string {
	proto := "http"
	if len(tableEndpoint) >= 6 && tableEndpoint[:6] == "https:" {
		proto = "https"
	}
	s := "DefaultEndpointsProtocol=" + proto + ";AccountName=" + account + ";AccountKey=" + base64Key + ";TableEndpoint=" + tableEndpoint + ";"
	if sec := SecondaryEndpoint(tableEndpoint, account); sec != "" {
		s += "TableSecondaryEndpoint=" + sec + ";"
	}
	return s
}

// SecondaryEndpoint returns the read-only secondary endpoint of a
// path-style table endpoint, such as
// http://127.0.0.1:10002/devstoreaccount1-secondary for
// http://127.0.0.1:10002/devstoreaccount1, or "" if the endpoint's path
// is not /account.
func SecondaryEndpoint(tableEndpoint, account string) string {
	e := strings.TrimSuffix(tableEndpoint, "/")
	if account == "" || !strings.HasSuffix(e, "/"+account) || strings.Count(e, "/") != 3 {
		return ""
	}
	return e + SecondarySuffix
}
