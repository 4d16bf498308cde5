package server

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"

	"github.com/localtable/localtable"
)

// This file reads request bodies and writes response bodies, JSON and
// XML.

// readJSONBody checks that the body is JSON and reads it, at most limit
// bytes.
func (rc *reqCtx) readJSONBody(limit int64) ([]byte, error) {
	if err := checkJSONBody(rc.r); err != nil {
		return nil, err
	}
	return rc.readBody(limit)
}

// readBody reads a request body of at most limit bytes.
func (rc *reqCtx) readBody(limit int64) ([]byte, error) {
	rc.limitBody(limit)
	b, err := io.ReadAll(rc.r.Body)
	if err != nil {
		if asWireError(err).Code == localtable.CodeRequestBodyTooLarge {
			return nil, err
		}
		return nil, errInvalidInput("The request body could not be read: " + err.Error())
	}
	return b, nil
}

// preference returns the Prefer header's return-content or
// return-no-content, or "".
func (rc *reqCtx) preference() string {
	return preferenceOf(rc.r.Header.Values("Prefer"))
}

// preferenceOf returns the return-content or return-no-content among
// Prefer header values, or "".
func preferenceOf(values []string) string {
	for _, v := range values {
		if hasToken(v, "return-no-content") {
			return "return-no-content"
		}
		if hasToken(v, "return-content") {
			return "return-content"
		}
	}
	return ""
}

// writeJSON answers status with a JSON body.
func (rc *reqCtx) writeJSON(status int, level metaLevel, body []byte) {
	h := rc.w.Header()
	h[hdrContentType] = valContentType[level]
	setHeader(h, hdrContentLength, strconv.Itoa(len(body)))
	h[hdrDSVersion] = valDSVersion
	rc.writeHeader(status)
	rc.w.Write(body)
}

// writeCreated answers a create (201 with the body) or, with Prefer:
// return-no-content, 204 with DataServiceId; both carry Location.
func (rc *reqCtx) writeCreated(loc string, level metaLevel, body func() []byte) {
	h := rc.w.Header()
	h.Set("Location", loc)
	switch pref := rc.preference(); pref {
	case "return-no-content":
		h.Set("Preference-Applied", pref)
		h.Set("DataServiceId", loc)
		h[hdrDSVersion] = valDSVersion
		rc.writeHeader(http.StatusNoContent)
	default:
		if pref != "" {
			h.Set("Preference-Applied", pref)
		}
		rc.writeJSON(http.StatusCreated, level, body())
	}
}

func errXML(msg string) *localtable.Error {
	return wireError(codeInvalidXMLDocument, "XML specified is not syntactically valid. "+msg)
}

// writeXML answers status with v as an XML document.
func (rc *reqCtx) writeXML(status int, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		rc.fail(errInternal("encoding XML: " + err.Error()))
		return
	}
	rc.writeRawXML(status, b)
}

func (rc *reqCtx) writeRawXML(status int, b []byte) {
	b = append([]byte(xml.Header[:len(xml.Header)-1]), b...)
	h := rc.w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	rc.writeHeader(status)
	rc.w.Write(b)
}
