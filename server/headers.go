package server

import "net/http"

// This file sets the response headers every request carries without
// Header.Set's work: Set canonicalizes the name anew (allocating for a
// name not already canonical) and allocates the value's slice each time.
// The names here are given canonical (TestHeaderNamesCanonical), and the
// values that never change are slices shared by every response: one of
// capacity 1, so that an Add to it copies instead of writing into it.

// Canonical response header names (textproto.CanonicalMIMEHeaderKey).
const (
	hdrRequestID     = "X-Ms-Request-Id"
	hdrDate          = "Date"
	hdrNoSniff       = "X-Content-Type-Options"
	hdrCacheControl  = "Cache-Control"
	hdrContentType   = "Content-Type"
	hdrContentLength = "Content-Length"
	hdrDSVersion     = "Dataserviceversion" // DataServiceVersion
	hdrETag          = "Etag"               // ETag
	hdrVersion       = "X-Ms-Version"
)

// canonicalHeaders lists the names above, for their test.
var canonicalHeaders = []string{hdrRequestID, hdrDate, hdrNoSniff, hdrCacheControl, hdrContentType, hdrContentLength, hdrDSVersion, hdrETag, hdrVersion}

// shared returns a header value shared by every response.
func shared(v string) []string { return []string{v}[:1:1] }

var (
	valNoSniff   = shared("nosniff")
	valNoCache   = shared("no-cache")
	valDSVersion = shared("3.0;")
	// valContentType is metaLevel.contentType by level.
	valContentType = [...][]string{
		metaNone:    shared(metaNone.contentType()),
		metaMinimal: shared(metaMinimal.contentType()),
		metaFull:    shared(metaFull.contentType()),
	}
)

// setHeader sets the header of a canonical name to v, as h.Set does.
func setHeader(h http.Header, name, v string) { h[name] = []string{v} }
