package server

import (
	"mime"
	"net/http"
	"strings"

	"github.com/localtable/localtable/internal/odata"
)

// metaLevel is the JSON metadata level of a response.
type metaLevel int

const (
	metaNone    metaLevel = iota // odata=nometadata: properties only
	metaMinimal                  // odata=minimalmetadata: odata.metadata, odata.etag, annotations
	metaFull                     // odata=fullmetadata: adds odata.type, odata.id, odata.editLink
)

func (m metaLevel) contentType() string {
	switch m {
	case metaNone:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case metaFull:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// metadata returns the level the request asks for: $format overrides
// Accept, plain application/json (or no preference) means minimal, and
// an Atom or XML-only Accept is 415 AtomFormatNotSupported.
func (rc *reqCtx) metadata() (metaLevel, error) {
	f := rc.query.Get("$format")
	if f == "" {
		f = rc.r.Header.Get("Accept")
	}
	return parseFormat(f)
}

func parseFormat(s string) (metaLevel, error) {
	if strings.TrimSpace(s) == "" {
		return metaMinimal, nil
	}
	atom := false
	for _, part := range strings.Split(s, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json":
			switch strings.ToLower(params["odata"]) {
			case "", "minimalmetadata":
				return metaMinimal, nil
			case "nometadata":
				return metaNone, nil
			case "fullmetadata":
				return metaFull, nil
			}
			return 0, wireError(codeJSONFormatNotSupported, "JSON format "+odata.Quote(params["odata"])+" is not supported: use odata=nometadata, minimalmetadata or fullmetadata.")
		case "*/*", "application/*":
			return metaMinimal, nil
		case "application/atom+xml", "application/xml", "application/atomsvc+xml":
			atom = true
		}
	}
	if atom {
		return 0, wireError(codeAtomFormatNotSupported, "Atom format is not supported: use Accept: application/json;odata=minimalmetadata.")
	}
	return metaMinimal, nil
}

// checkJSONBody rejects a request body that says it is not JSON: Atom or
// XML is 415 AtomFormatNotSupported, any other type but application/json
// (with any parameters: odata=…, charset, streaming) 415
// MediaTypeNotSupported. The service reads a JSON payload only as
// application/json (Insert Entity, Create Table: "Content-Type: … Set
// this header to application/json" for the JSON format) and answers any
// other media type with 415 "None of the provided media types are
// supported." (the answer quoted in Azure/azure-sdk-for-python#13514;
// the Table service's error-code table lists its two 415s, Atom and
// JSON). The SDKs (Go aztables, JS @azure/data-tables, Python) send
// application/json. Refusing text/plain, form and multipart bodies also
// means a page on another site cannot write with a POST that needs no
// CORS preflight. A body without Content-Type is read as JSON, as before.
// A $batch (multipart/mixed) does not come here: package batch reads it.
func checkJSONBody(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return wireError(codeInvalidHeaderValue, "The Content-Type header is not valid.")
	}
	switch mt {
	case "application/json":
		return nil
	case "application/atom+xml", "application/xml":
		return wireError(codeAtomFormatNotSupported, "Atom format is not supported: send application/json.")
	}
	return wireError(codeMediaTypeNotSupported, "None of the provided media types are supported: the body must be application/json, not "+mt+".")
}
