package server

import (
	"encoding/xml"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/entityjson"
	"github.com/localtable/localtable/internal/edmfmt"
	"github.com/localtable/localtable/server/internal/auth"
)

// This file serves table access policies, GET and PUT /{acct}/{table}?comp=acl.

type signedIdentifiers struct {
	XMLName     xml.Name           `xml:"SignedIdentifiers"`
	Identifiers []signedIdentifier `xml:"SignedIdentifier"`
}

type signedIdentifier struct {
	ID     *string          `xml:"Id"`
	Policy *xmlAccessPolicy `xml:"AccessPolicy"`
}

type xmlAccessPolicy struct {
	Start      string `xml:"Start,omitempty"`
	Expiry     string `xml:"Expiry,omitempty"`
	Permission string `xml:"Permission,omitempty"`
}

func formatXMLTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return edmfmt.DateTime7(t)
}

func parseXMLTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, ok := auth.ParseSASTime(s); ok {
		return t.UTC(), nil
	}
	return entityjson.ParseDateTime(s)
}

// serveACL serves Get Table ACL and Set Table ACL.
func (rc *reqCtx) serveACL() {
	table := rc.cls.Table
	if err := rc.authorize(rc.cls.Op, table, "", ""); err != nil {
		rc.fail(err)
		return
	}
	t := rc.acct.data.Table(table)
	switch rc.method {
	case http.MethodGet, http.MethodHead:
		ps, err := t.GetAccessPolicy(rc.r.Context())
		if err != nil {
			rc.fail(aclError(err))
			return
		}
		doc := signedIdentifiers{Identifiers: []signedIdentifier{}}
		for _, p := range ps {
			doc.Identifiers = append(doc.Identifiers, signedIdentifier{ID: &p.ID, Policy: &xmlAccessPolicy{
				Start: formatXMLTime(p.Start), Expiry: formatXMLTime(p.Expiry), Permission: p.Permission,
			}})
		}
		rc.writeXML(http.StatusOK, doc)
	case http.MethodPut:
		body, err := rc.readBody(MaxXMLBody)
		if err != nil {
			rc.fail(err)
			return
		}
		var doc signedIdentifiers
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := xml.Unmarshal(body, &doc); err != nil {
				rc.fail(errXML(err.Error()))
				return
			}
		}
		if len(doc.Identifiers) > localtable.MaxAccessPolicies {
			rc.fail(errXML(strconv.Itoa(len(doc.Identifiers)) + " signed identifiers; a table may have at most 5."))
			return
		}
		ps := make([]localtable.AccessPolicy, 0, len(doc.Identifiers))
		for _, si := range doc.Identifiers {
			if si.ID == nil {
				// The service answers a SignedIdentifier without <Id> as a
				// document that is not valid, not as an invalid ID.
				rc.fail(errXML("A SignedIdentifier has no Id."))
				return
			}
			p := localtable.AccessPolicy{ID: *si.ID}
			if si.Policy != nil {
				if p.Start, err = parseXMLTime(si.Policy.Start); err == nil {
					p.Expiry, err = parseXMLTime(si.Policy.Expiry)
				}
				if err != nil {
					rc.fail(errXML("An access policy time is not valid: " + err.Error()))
					return
				}
				p.Permission = si.Policy.Permission
			}
			ps = append(ps, p)
		}
		if err := t.SetAccessPolicy(rc.r.Context(), ps); err != nil {
			rc.fail(aclError(err))
			return
		}
		rc.writeHeader(http.StatusNoContent)
	default:
		rc.fail(errMethod(rc.r))
	}
}

// aclError maps a core error to the ACL operations' answer: the service
// answers Get and Set Table ACL on a missing table with 404
// ResourceNotFound, not TableNotFound.
func aclError(err error) error {
	if errors.Is(err, localtable.ErrTableNotFound) {
		return wireError(localtable.CodeResourceNotFound, "The specified resource does not exist.")
	}
	return err
}
