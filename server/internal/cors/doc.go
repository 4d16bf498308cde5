// Package cors is the Cross-Origin Resource Sharing of the Table service:
// the CorsRule elements of Set Table Service Properties, validated as the
// service validates them (Parse) and put in force per account (Config),
// the answer to a preflight (Config.Preflight) and the Access-Control
// headers of an actual request (Config.AddHeaders).
//
// CORS authorizes nothing on the server: it tells a browser which pages
// may read the responses. Errors are *localtable.Error values with the
// service's codes and statuses.
package cors
