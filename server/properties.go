package server

import (
	"encoding/xml"
	"strconv"
	"strings"

	"github.com/localtable/localtable/internal/odata"
)

// This file checks the values of a Set Table Service Properties body
// (Logging, HourMetrics, MinuteMetrics; CORS rules are checked apart).
//
// The Table service answers a value it rejects (a retention of 366 days,
// more than five signed identifiers) with 400 InvalidXmlDocument, "XML
// specified is not syntactically valid.", as it answers a body it cannot
// parse: recorded responses of the service show it, where the Blob
// service would say InvalidXmlNodeValue.

// xmlServiceProperties holds the analytics settings of a service
// properties document, as text, so that every value can be checked.
type xmlServiceProperties struct {
	Logging       *xmlLogging `xml:"Logging"`
	HourMetrics   *xmlMetrics `xml:"HourMetrics"`
	MinuteMetrics *xmlMetrics `xml:"MinuteMetrics"`
}

type xmlLogging struct {
	Delete          *string       `xml:"Delete"`
	Read            *string       `xml:"Read"`
	Write           *string       `xml:"Write"`
	RetentionPolicy *xmlRetention `xml:"RetentionPolicy"`
}

type xmlMetrics struct {
	Enabled         *string       `xml:"Enabled"`
	IncludeAPIs     *string       `xml:"IncludeAPIs"`
	RetentionPolicy *xmlRetention `xml:"RetentionPolicy"`
}

type xmlRetention struct {
	Enabled *string `xml:"Enabled"`
	Days    *string `xml:"Days"`
}

// Retention limits, in days.
const (
	minRetentionDays = 1
	maxRetentionDays = 365
)

// checkPropertyValues checks the analytics settings of a well-formed
// service properties body: booleans are XML booleans, a retention policy
// that is enabled has 1 to 365 days, and enabled metrics say whether they
// include APIs.
func checkPropertyValues(body []byte) error {
	var p xmlServiceProperties
	if err := xml.Unmarshal(body, &p); err != nil {
		return errXML(err.Error())
	}
	if l := p.Logging; l != nil {
		for _, f := range []struct {
			name string
			v    *string
		}{{"Logging/Delete", l.Delete}, {"Logging/Read", l.Read}, {"Logging/Write", l.Write}} {
			if _, err := optionalBool(f.name, f.v); err != nil {
				return err
			}
		}
		if err := checkRetention("Logging", l.RetentionPolicy); err != nil {
			return err
		}
	}
	for _, m := range []struct {
		name string
		m    *xmlMetrics
	}{{"HourMetrics", p.HourMetrics}, {"MinuteMetrics", p.MinuteMetrics}} {
		if m.m == nil {
			continue
		}
		enabled, err := optionalBool(m.name+"/Enabled", m.m.Enabled)
		if err != nil {
			return err
		}
		if _, err := optionalBool(m.name+"/IncludeAPIs", m.m.IncludeAPIs); err != nil {
			return err
		}
		if enabled && m.m.IncludeAPIs == nil {
			return errXML(m.name + " is enabled but does not say IncludeAPIs.")
		}
		if err := checkRetention(m.name, m.m.RetentionPolicy); err != nil {
			return err
		}
	}
	return nil
}

// checkRetention checks a retention policy: Enabled a boolean, and Days,
// required when it is enabled, a whole number from 1 to 365.
func checkRetention(parent string, r *xmlRetention) error {
	if r == nil {
		return nil
	}
	enabled, err := optionalBool(parent+"/RetentionPolicy/Enabled", r.Enabled)
	if err != nil {
		return err
	}
	if r.Days == nil {
		if enabled {
			return errXML(parent + "/RetentionPolicy is enabled but has no Days.")
		}
		return nil
	}
	d, err := strconv.Atoi(strings.TrimSpace(*r.Days))
	if err != nil || d < minRetentionDays || d > maxRetentionDays {
		return errXML(parent + "/RetentionPolicy/Days " + odata.Quote(*r.Days) + " is not a whole number from 1 to 365.")
	}
	return nil
}

// optionalBool parses an XML boolean (true, false, 1 or 0) that may be
// absent.
func optionalBool(name string, v *string) (bool, error) {
	if v == nil {
		return false, nil
	}
	switch strings.TrimSpace(*v) {
	case "true", "1":
		return true, nil
	case "false", "0":
		return false, nil
	}
	return false, errXML(name + " " + odata.Quote(*v) + " is not a boolean.")
}
