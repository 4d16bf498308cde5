package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/localtable/localtable/internal/reqclass"
)

// This file decides which version of the protocol a request is served
// with (the x-ms-version it asks for) and the response headers that
// depend on it.

// serviceVersions lists every x-ms-version the server accepts, oldest
// first: the versions of the Azure Storage services, as the service's
// "Versioning for Azure Storage" and "Previous Azure Storage versions"
// pages list them. The SDKs send 2019-02-02 (aztables, @azure/data-tables,
// azure-data-tables) or later.
var serviceVersions = []string{
	"2009-04-14", "2009-07-17", "2009-09-19", "2011-08-18", "2012-02-12",
	"2013-08-15", "2014-02-14", "2015-02-21", "2015-04-05", "2015-07-08",
	"2015-12-11", "2016-05-31", "2017-04-17", "2017-07-29", "2017-11-09",
	"2018-03-28", "2018-11-09", "2019-02-02", "2019-07-07", "2019-10-10",
	"2019-12-12", "2020-02-10", "2020-04-08", "2020-06-12", "2020-08-04",
	"2020-10-02", "2020-12-06", "2021-02-12", "2021-04-10", "2021-06-08",
	"2021-08-06", "2021-10-04", "2021-12-02", "2022-11-02", "2023-01-03",
	"2023-08-03", "2023-11-03", "2024-02-04", "2024-05-04", "2024-08-04",
	"2024-11-04", "2025-01-05", "2025-05-05", "2025-07-05", "2025-11-05",
	"2026-02-06", "2026-04-06", "2026-06-06",
}

// SupportedVersions returns the x-ms-version values the server accepts,
// oldest first, from 2009-04-14 to LatestVersion. The caller may modify
// the slice.
func SupportedVersions() []string { return slices.Clone(serviceVersions) }

// LatestVersion is the newest version the server speaks. It answers
// requests that name no version (possible only with DisableAuth, or
// before authentication fails) and requests whose version it rejects.
const LatestVersion = "2026-06-06"

// Versions from which the service's behaviour changes in a way responses
// show. Versions are dates, so they compare as strings.
const (
	// versionHeaderSince: the response carries x-ms-version for requests
	// made with 2009-09-19 and later.
	versionHeaderSince = "2009-09-19"
	// versionJSONSince: JSON payloads (and the odata.error JSON error
	// body) exist from 2013-08-15; earlier versions speak Atom only.
	versionJSONSince = "2013-08-15"
	// versionStatsSince: Get Table Service Stats exists from 2013-08-15.
	versionStatsSince = "2013-08-15"
	// versionErrorCodeSince: failed operations carry x-ms-error-code from
	// 2017-07-29.
	versionErrorCodeSince = "2017-07-29"
	// versionClientIDSince: responses echo x-ms-client-request-id from
	// 2019-02-02.
	versionClientIDSince = "2019-02-02"
)

// knownVersion reports whether v is one of serviceVersions.
func knownVersion(v string) bool {
	_, ok := slices.BinarySearch(serviceVersions, v)
	return ok
}

// maxClientRequestID is the longest x-ms-client-request-id the service
// echoes.
const maxClientRequestID = 1024

// errUnversioned is the service's answer to a request authorized with
// Shared Key, Shared Key Lite or a bearer token that names no version.
func errUnversioned() error {
	return &detailedError{
		err: wireError(codeAuthenticationFailed,
			"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."),
		details: [][2]string{
			{"AuthenticationErrorDetail", "Unversioned authenticated access is not allowed."},
		},
	}
}

// errHeaderValue is 400 InvalidHeaderValue naming the header and its
// value, as the service details it.
func errHeaderValue(name, value string) error {
	return &detailedError{
		err:     wireError(codeInvalidHeaderValue, "The value for one of the HTTP headers is not in the correct format."),
		details: [][2]string{{"HeaderName", name}, {"HeaderValue", value}},
	}
}

// requestVersion returns the version a request is served with:
//   - with a shared access signature, its signed version sv (the service
//     then ignores x-ms-version);
//   - otherwise the x-ms-version header, which must name a known version
//     (else 400 InvalidHeaderValue);
//   - with no x-ms-version, LatestVersion when the request carries no
//     Authorization header or authentication is off, and 403
//     AuthenticationFailed ("Unversioned authenticated access is not
//     allowed.") when it does;
//   - for a CORS preflight (OPTIONS), anonymous, its x-ms-version if it
//     names a known one and LatestVersion otherwise, never an error.
//
// On error the version returned is LatestVersion, which the error is
// answered with.
func (s *Server) requestVersion(r *http.Request) (string, error) {
	var sas bool
	if q, err := reqclass.ParseQuery(r.URL.RawQuery); err == nil && q.Has("sig") {
		sas = true
		if sv := q.Get("sv"); knownVersion(sv) {
			return sv, nil
		}
	}
	vals := r.Header.Values("X-Ms-Version")
	if r.Method == http.MethodOptions {
		// A CORS preflight is anonymous and names no version: whatever
		// it carries, it is answered (cors.go), never refused here.
		if len(vals) == 1 && knownVersion(vals[0]) {
			return vals[0], nil
		}
		return LatestVersion, nil
	}
	if len(vals) == 0 {
		if !sas && !s.opts.DisableAuth && r.Header.Get("Authorization") != "" {
			return LatestVersion, errUnversioned()
		}
		return LatestVersion, nil
	}
	if len(vals) > 1 || !knownVersion(vals[0]) {
		if s.opts.AcceptAnyVersion && len(vals) == 1 {
			return nearestVersion(vals[0]), nil
		}
		return LatestVersion, errHeaderValue("x-ms-version", vals[0])
	}
	return vals[0], nil
}

// nearestVersion is the version a request asking for the unknown
// version v is served with under Options.AcceptAnyVersion: the newest
// known version not after v, if v is a date (YYYY-MM-DD), and else the
// latest.
func nearestVersion(v string) string {
	if _, err := time.Parse(time.DateOnly, v); err != nil {
		return LatestVersion
	}
	i, _ := slices.BinarySearch(serviceVersions, v)
	if i == 0 {
		return serviceVersions[0]
	}
	return serviceVersions[i-1]
}

// setVersion records the request's version and sets the response headers
// that depend on it: x-ms-version (from 2009-09-19) and the echo of
// x-ms-client-request-id (from 2019-02-02, when the value is at most
// 1024 visible ASCII characters, as the service does).
func (rc *reqCtx) setVersion(v string) {
	rc.version = v
	h := rc.w.Header()
	if v >= versionHeaderSince {
		setHeader(h, hdrVersion, v)
	} else {
		h.Del("X-Ms-Version")
	}
	h.Del("X-Ms-Client-Request-Id")
	if id := rc.r.Header.Get("X-Ms-Client-Request-Id"); v >= versionClientIDSince && echoableClientID(id) {
		h.Set("X-Ms-Client-Request-Id", id)
	}
}

// echoableClientID reports whether id is 1 to 1024 visible ASCII
// characters (RFC 5234 VCHAR, 0x21 to 0x7E).
func echoableClientID(id string) bool {
	if id == "" || len(id) > maxClientRequestID {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}

// checkJSONVersion rejects a JSON operation (tables, entities, batches)
// asked for with a version before 2013-08-15, which had no JSON: 415
// JsonFormatNotSupported when the request asks for JSON, as the service
// answered those versions, and 415 AtomFormatNotSupported otherwise,
// since this server speaks no Atom.
func (rc *reqCtx) checkJSONVersion() error {
	if rc.version >= versionJSONSince {
		return nil
	}
	for _, v := range []string{rc.query.Get("$format"), rc.r.Header.Get("Accept"), rc.r.Header.Get("Content-Type")} {
		if strings.Contains(strings.ToLower(v), "json") {
			return wireError(codeJSONFormatNotSupported, "JSON format is not supported.")
		}
	}
	return wireError(codeAtomFormatNotSupported,
		"Atom format is not supported: this server speaks JSON, which needs x-ms-version "+versionJSONSince+" or later.")
}
