package server

// ConnectionString returns the connection string the Azure SDKs accept for
// a table endpoint such as http://127.0.0.1:10002/devstoreaccount1 (not
// UseDevelopmentStorage=true, which aztables rejects).
func ConnectionString(tableEndpoint, account, base64Key string) string {
	proto := "http"
	if len(tableEndpoint) >= 6 && tableEndpoint[:6] == "https:" {
		proto = "https"
	}
	return "DefaultEndpointsProtocol=" + proto + ";AccountName=" + account + ";AccountKey=" + base64Key + ";TableEndpoint=" + tableEndpoint + ";"
}
