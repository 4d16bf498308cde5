package server

import (
	"bytes"
	"encoding/xml"
	"net/http"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/server/internal/cors"
)

// This file serves the service properties and statistics,
// /{acct}/?restype=service&comp=properties|stats. Properties are stored in
// the account, as sent (localtable.Account.ServiceProperties), so that they
// persist with its data and servers over a shared engine share them; of
// them only the CORS rules have an effect (package cors), which the server
// caches for propsTTL (see account.corsRules).
// Statistics are answered at the secondary endpoint only, as the service
// answers them.

// defaultProperties is what GET answers before any PUT: logging and
// metrics off, no CORS rules.
const defaultProperties = `<StorageServiceProperties>` +
	`<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
	`<HourMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>` +
	`<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>` +
	`<Cors/></StorageServiceProperties>`

// getServiceProperties serves Get Table Service Properties.
func (rc *reqCtx) getServiceProperties() {
	if err := rc.authorize(rc.cls.Op, "", "", ""); err != nil {
		rc.fail(err)
		return
	}
	p, err := rc.acct.data.ServiceProperties(rc.r.Context())
	if err != nil {
		rc.fail(err)
		return
	}
	if p == nil {
		p = []byte(defaultProperties)
	}
	rc.writeRawXML(http.StatusOK, p)
}

// setServiceProperties serves Set Table Service Properties.
func (rc *reqCtx) setServiceProperties() {
	if err := rc.authorize(rc.cls.Op, "", "", ""); err != nil {
		rc.fail(err)
		return
	}
	body, err := rc.readBody(MaxXMLBody)
	if err != nil {
		rc.fail(err)
		return
	}
	body = bytes.TrimSpace(body)
	if err := checkProperties(body); err != nil {
		rc.fail(err)
		return
	}
	if err := checkPropertyValues(body); err != nil {
		rc.fail(err)
		return
	}
	if bytes.HasPrefix(body, []byte("<?xml")) {
		if i := bytes.Index(body, []byte("?>")); i >= 0 {
			body = bytes.TrimSpace(body[i+2:])
		}
	}
	doc, err := cors.Parse(body)
	if err != nil {
		rc.fail(err)
		return
	}
	// The merge with the stored document (cors.Merge) is in the update:
	// on a shared engine, it is redone if another server set them since.
	a := rc.acct
	a.mu.Lock()
	defer a.mu.Unlock()
	var stored []byte
	err = a.data.UpdateServiceProperties(rc.r.Context(), func(cur []byte) ([]byte, error) {
		stored = cors.Merge(body, doc, cur)
		return stored, nil
	})
	if err != nil {
		rc.fail(err)
		return
	}
	if err := a.cors.Load(stored); err != nil {
		rc.fail(err)
		return
	}
	a.loadedAt.Store(monotonic() + 1)
	rc.writeHeader(http.StatusAccepted)
}

// getServiceStats serves Get Table Service Stats.
func (rc *reqCtx) getServiceStats() {
	if !rc.secondary || rc.version < versionStatsSince {
		rc.fail(errStatsNotHere())
		return
	}
	if err := rc.authorize(rc.cls.Op, "", "", ""); err != nil {
		rc.fail(err)
		return
	}
	stats := `<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>` +
		rc.start.UTC().Format(http.TimeFormat) + `</LastSyncTime></GeoReplication></StorageServiceStats>`
	rc.writeRawXML(http.StatusOK, []byte(stats))
}

// checkProperties accepts a well-formed document whose root is
// StorageServiceProperties.
func checkProperties(body []byte) error {
	var doc struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		return errXML(err.Error())
	}
	if doc.XMLName.Local != "StorageServiceProperties" {
		return errXML("The root element must be StorageServiceProperties.")
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	for {
		if _, err := dec.Token(); err != nil {
			if err.Error() == "EOF" {
				return nil
			}
			return errXML(err.Error())
		}
	}
}

// errStatsNotHere is the service's answer to Get Table Service Stats at
// the primary endpoint (the operation exists at the secondary endpoint
// only) or with a version before 2013-08-15, which did not have it.
func errStatsNotHere() *localtable.Error {
	return wireError(codeInvalidQueryParameter,
		"Value for one of the query parameters specified in the request URI is invalid. (comp=stats is served at the secondary endpoint, /{account}"+SecondarySuffix+", from x-ms-version "+versionStatsSince+".)")
}
