package server

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/edmfmt"
)

// This file writes error bodies in the three formats the Table service
// answers with:
//   - JSON, {"odata.error":{…}}, for the JSON operations (tables, entities,
//     batches) asked for with version 2013-08-15 or later;
//   - OData XML, <m:error xmlns:m="…/dataservices/metadata">, for the XML
//     operations (Get/Set Table ACL, Get/Set Table Service Properties,
//     Get Table Service Stats) whatever the failure, and for every
//     operation asked for with a version before 2013-08-15, which spoke
//     Atom;
//   - the storage services' common XML, <Error><Code>…</Code><Message>…
//     </Message>…details…</Error>, for a failure found before the
//     request's version is known (a bad or missing x-ms-version), since
//     the table formats depend on the version. Its details (HeaderName,
//     HeaderValue, AuthenticationErrorDetail) follow the message.
//
// Every message ends with "\nRequestId:<id>\nTime:<7-digit UTC time>".

// odataMetadataNS is the namespace of the OData XML error.
const odataMetadataNS = "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"

// detailedError is a *localtable.Error raised before the request's version
// is known, with the detail elements the common XML error format carries.
type detailedError struct {
	err     *localtable.Error
	details [][2]string // name, value; in order
}

func (e *detailedError) Error() string { return e.err.Error() }
func (e *detailedError) Unwrap() error { return e.err }

// errorFormat is the format of an error body.
type errorFormat int

const (
	formatJSON       errorFormat = iota // odata.error JSON
	formatODataXML                      // m:error OData XML
	formatStorageXML                    // the storage services' <Error>
)

// errorFormat returns the format err is answered in.
func (rc *reqCtx) errorFormat(err error) errorFormat {
	var de *detailedError
	switch {
	case errors.As(err, &de):
		return formatStorageXML
	case rc.xmlAPI || rc.version < versionJSONSince:
		return formatODataXML
	}
	return formatJSON
}

// errorText is an error's message as the service writes it: the fixed
// message of its code if any, after prefix (a batch's "index:"), then
// the request id and time.
func errorText(e *localtable.Error, prefix, requestID string, now time.Time) string {
	text := e.Message
	if m, ok := fixedMessages[e.Code]; ok && !strings.HasPrefix(text, m) {
		text = m // a message that starts with the fixed one keeps its hint after it
	}
	return prefix + text + "\nRequestId:" + requestID + "\nTime:" + edmfmt.DateTime7(now.UTC())
}

// odataXMLErrorBody is the OData XML error document.
func odataXMLErrorBody(e *localtable.Error, requestID string, now time.Time) []byte {
	b := []byte(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="` + odataMetadataNS + `"><m:code>`)
	b = appendXMLText(b, string(e.Code))
	b = append(b, `</m:code><m:message xml:lang="en-US">`...)
	b = appendXMLText(b, errorText(e, "", requestID, now))
	return append(b, "</m:message></m:error>"...)
}

// storageXMLErrorBody is the storage services' common XML error document.
func storageXMLErrorBody(e *localtable.Error, details [][2]string, requestID string, now time.Time) []byte {
	b := []byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>`)
	b = appendXMLText(b, string(e.Code))
	b = append(b, "</Code><Message>"...)
	b = appendXMLText(b, errorText(e, "", requestID, now))
	b = append(b, "</Message>"...)
	for _, d := range details {
		b = append(b, '<')
		b = append(b, d[0]...)
		b = append(b, '>')
		b = appendXMLText(b, d[1])
		b = append(b, "</"...)
		b = append(b, d[0]...)
		b = append(b, '>')
	}
	return append(b, "</Error>"...)
}

// appendXMLText appends s as XML character data: &, < and > escaped, a
// carriage return as a character reference (so that it survives
// end-of-line normalization), newlines and tabs as they are, and what XML
// 1.0 cannot hold (other control characters, invalid UTF-8) as U+FFFD.
func appendXMLText(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '&':
			b = append(b, "&amp;"...)
		case r == '<':
			b = append(b, "&lt;"...)
		case r == '>':
			b = append(b, "&gt;"...)
		case r == '\r':
			b = append(b, "&#xD;"...)
		case r == '\n' || r == '\t':
			b = append(b, byte(r))
		case r == utf8.RuneError && n == 1, r < 0x20, r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			b = utf8.AppendRune(b, utf8.RuneError)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}
