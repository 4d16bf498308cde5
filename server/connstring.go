package server

import "strings"

// ConnectionString returns the connection string the Azure SDKs accept for
// a table endpoint such as http://127.0.0.1:10002/devstoreaccount1 (not
// UseDevelopmentStorage=true, which aztables rejects).
//
// It names no TableSecondaryEndpoint: the SDKs that reach the secondary on
// their own (Python's get_service_stats, .NET's GetStatistics) derive it
// from the primary endpoint, and Python's takes a TableSecondaryEndpoint
// for a host name, so naming it there breaks that call. For a client of
// the secondary itself, use SecondaryConnectionString.
func ConnectionString(tableEndpoint, account, base64Key string) string {
	proto := "http"
	if len(tableEndpoint) >= 6 && tableEndpoint[:6] == "https:" {
		proto = "https"
	}
	return "DefaultEndpointsProtocol=" + proto + ";AccountName=" + account + ";AccountKey=" + base64Key + ";TableEndpoint=" + tableEndpoint + ";"
}

// SecondaryConnectionString returns the connection string of a client of
// the read-only secondary endpoint of a path-style table endpoint (its
// TableEndpoint is SecondaryEndpoint(tableEndpoint, account)), or "" if
// the endpoint is not path-style.
func SecondaryConnectionString(tableEndpoint, account, base64Key string) string {
	sec := SecondaryEndpoint(tableEndpoint, account)
	if sec == "" {
		return ""
	}
	return ConnectionString(sec, account, base64Key)
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
