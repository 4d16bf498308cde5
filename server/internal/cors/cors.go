package cors

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/localtable/localtable"
)

// This file implements Cross-Origin Resource Sharing as the service does
// ("CORS support for the Azure Storage services", "Preflight Table
// Request"): the CorsRule elements of Set Table Service Properties are
// validated and put in force; an OPTIONS request is an anonymous preflight
// evaluated against them, whatever resource it names; and an actual request
// whose origin a rule allows gets the Access-Control headers, errors
// included.
//
// Rules are evaluated in the order they were set. The first rule that
// allows both the origin (an exact, case-sensitive match, or "*") and the
// method (an exact match) is the one used: a preflight whose headers that
// rule does not allow fails, even if a later rule would allow them.
// Request and exposed headers compare case-insensitively, and a header
// ending in "*" is a prefix.

// The service's limits on CORS rules.
const (
	maxCORSRules           = 5    // rules per service
	maxCORSRulesChars      = 2048 // characters of all rules, XML tags excluded
	maxCORSOrigins         = 64   // origins in one AllowedOrigins
	maxCORSValueChars      = 256  // characters of one origin or header
	maxCORSHeaderList      = 66   // entries in one AllowedHeaders or ExposedHeaders
	maxCORSLiteralHeaders  = 64   // literal headers in one list
	maxCORSPrefixedHeaders = 2    // prefixed (x-ms-meta*) headers in one list
)

// corsMethods are the verbs a rule may allow, as the service's management
// API lists them (the data-plane page lists the first seven; PATCH is what
// the current SDKs merge with). Names are upper case and match exactly.
var corsMethods = []string{"DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH", "CONNECT", "TRACE"}

// Error codes of this file.
const (
	codeCorsPreflightFailure localtable.ErrorCode = "CorsPreflightFailure"
	codeInvalidXMLNodeValue  localtable.ErrorCode = "InvalidXmlNodeValue"
	codeInvalidXMLDocument   localtable.ErrorCode = "InvalidXmlDocument"
	codeInvalidHeaderValue   localtable.ErrorCode = "InvalidHeaderValue"
)

// newError returns an *localtable.Error with any code; the server
// answers it with the code's status (server.HTTPStatus).
func newError(code localtable.ErrorCode, msg string) *localtable.Error {
	return &localtable.Error{Code: code, Message: msg}
}

// errXML is the service's answer to a properties document it cannot
// accept: 400 InvalidXmlDocument.
func errXML(msg string) *localtable.Error {
	return newError(codeInvalidXMLDocument, "XML specified is not syntactically valid. "+msg)
}

// The service's fixed messages for failed preflights.
const (
	msgCORSPreflightFailure = "CORS not enabled or no matching rule found for this request."
	msgCORSMissingHeader    = "A required CORS header is not present."
)

// errXMLNode is the service's answer to a well-formed properties document
// with a bad value in element node.
func errXMLNode(node, detail string) *localtable.Error {
	return newError(codeInvalidXMLNodeValue,
		"The value for one of the XML nodes is not in the correct format. "+node+": "+detail)
}

// corsRule is one CorsRule of the service properties.
type corsRule struct {
	anyOrigin bool     // AllowedOrigins is "*"
	origins   []string // otherwise, compared exactly
	methods   []string // from corsMethods
	allowed   corsHeaders
	exposed   corsHeaders
	maxAge    int
}

// corsHeaders is an AllowedHeaders or ExposedHeaders list.
type corsHeaders struct {
	all      bool     // "*": every header
	literal  []string // whole names, compared case-insensitively
	prefixes []string // "x-ms-meta*" as "x-ms-meta", compared case-insensitively
}

// match reports whether the list names header h.
func (c *corsHeaders) match(h string) bool {
	for _, l := range c.literal {
		if strings.EqualFold(l, h) {
			return true
		}
	}
	return c.matchWild(h)
}

// matchWild reports whether "*" or one of the prefixes names header h.
func (c *corsHeaders) matchWild(h string) bool {
	if c.all {
		return true
	}
	for _, p := range c.prefixes {
		if len(h) >= len(p) && strings.EqualFold(h[:len(p)], p) {
			return true
		}
	}
	return false
}

// allowsOrigin reports whether the rule allows origin, which may be empty
// (no Origin header: only a rule for every origin allows it).
func (r *corsRule) allowsOrigin(origin string) bool {
	return r.anyOrigin || slices.Contains(r.origins, origin)
}

// allowsHeaders reports whether the rule allows every header of an
// Access-Control-Request-Headers list.
func (r *corsRule) allowsHeaders(list string) bool {
	if r.allowed.all || list == "" {
		return true
	}
	for _, h := range strings.Split(list, ",") {
		if !r.allowed.match(strings.TrimSpace(h)) {
			return false
		}
	}
	return true
}

// exposeList is the Access-Control-Expose-Headers value of a response with
// headers h: the rule's literal headers, and the response's own headers
// that its prefixes name. Content-Length, Date and Transfer-Encoding,
// which the transport may add later, are named when a prefix covers them.
func (r *corsRule) exposeList(h http.Header) string {
	var names []string
	add := func(n string) {
		for _, have := range names {
			if strings.EqualFold(have, n) {
				return
			}
		}
		names = append(names, n)
	}
	if r.exposed.all || len(r.exposed.prefixes) > 0 {
		late := []string{"Content-Length", "Date", "Transfer-Encoding"}
		keys := make([]string, 0, len(h))
		for k := range h {
			if !slices.Contains(late, k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range append(keys, late...) {
			if r.exposed.matchWild(k) {
				add(k)
			}
		}
	}
	for _, l := range r.exposed.literal {
		add(l)
	}
	return strings.Join(names, ",")
}

// corsState is the CORS configuration of an account: its rules, in order
// (none: CORS is off), and the Cors element they came from.
type corsState struct {
	rules []corsRule
	raw   []byte
}

// Config holds an account's CORS rules. Requests read it without
// locking; the caller serializes Load.
type Config struct {
	p atomic.Pointer[corsState]
}

// rules returns the rules in force.
func (c *Config) rules() []corsRule {
	if s := c.p.Load(); s != nil {
		return s.rules
	}
	return nil
}

// Load puts in force the rules of stored, a properties document as Merge
// made it (nil: none stored, no rules). A document that does not parse
// leaves the rules as they were, and is an error. The caller serializes
// calls.
func (c *Config) Load(stored []byte) error {
	if stored == nil {
		c.p.Store(&corsState{})
		return nil
	}
	doc, err := Parse(stored)
	if err != nil {
		return err
	}
	c.p.Store(&corsState{rules: doc.rules, raw: doc.raw})
	return nil
}

// Merge returns the properties document to store when body, whose CORS
// element Parse read into doc, is set over cur, the document stored (nil:
// none). A document without a Cors element leaves the rules as they were,
// as the service does: the result is body with cur's Cors element added,
// so that Get Table Service Properties still shows it. Merge is a pure
// function of its arguments.
func Merge(body []byte, doc Doc, cur []byte) []byte {
	if doc.found || cur == nil {
		return body
	}
	old, err := Parse(cur)
	if err != nil || !old.found {
		return body
	}
	return doc.insert(body, old.raw)
}

// Doc is what a StorageServiceProperties document says about CORS.
type Doc struct {
	found bool       // the document has a Cors element
	rules []corsRule // its rules, in order
	raw   []byte     // the element as sent

	rootEnd     int    // offset of the root's end tag
	rootName    []byte // the root's name as written
	selfClosing bool   // the root is <StorageServiceProperties/>
}

// insert returns body, which has no Cors element, with element cors added
// as the root's last child.
func (d Doc) insert(body, cors []byte) []byte {
	var b []byte
	if d.selfClosing { // rootEnd is just past "/>"
		b = append(b, body[:d.rootEnd-2]...)
		b = append(b, '>')
		b = append(b, cors...)
		b = append(b, "</"...)
		b = append(b, d.rootName...)
		b = append(b, '>')
	} else {
		b = append(b, body[:d.rootEnd]...)
		b = append(b, cors...)
	}
	return append(b, body[d.rootEnd:]...)
}

// Parse reads and validates the Cors element of a well-formed
// StorageServiceProperties document, as Set Table Service Properties does:
// a malformed rule is 400 InvalidXmlDocument, a bad value 400
// InvalidXmlNodeValue.
func Parse(body []byte) (Doc, error) {
	var doc Doc
	dec := xml.NewDecoder(bytes.NewReader(body))
	depth, chars := 0, 0
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return doc, nil
		}
		if err != nil {
			return doc, errXML(err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				name := body[off:]
				if i := bytes.IndexByte(name, '<'); i >= 0 {
					name = name[i+1:]
				}
				if i := bytes.IndexAny(name, " \t\r\n/>"); i >= 0 {
					name = name[:i]
				}
				doc.rootName = name
			}
			if depth != 2 || t.Name.Local != "Cors" {
				continue
			}
			if doc.found {
				return doc, errXML("Found duplicate element: Cors.")
			}
			doc.found = true
			if doc.rules, err = parseCORSRules(dec, &chars); err != nil {
				return doc, err
			}
			depth--
			doc.raw = bytes.Clone(body[off:dec.InputOffset()])
		case xml.EndElement:
			if depth == 1 {
				doc.rootEnd = off
				doc.selfClosing = off >= 2 && string(body[off-2:off]) == "/>"
			}
			depth--
		}
	}
}

// parseCORSRules reads the CorsRule elements of a Cors element, through its
// end tag.
func parseCORSRules(dec *xml.Decoder, chars *int) ([]corsRule, error) {
	var rules []corsRule
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, errXML(err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local != "CorsRule" {
				return nil, errXML("Element " + t.Name.Local + " is not allowed in Cors: expected CorsRule.")
			}
			if len(rules) == maxCORSRules {
				return nil, errXML("CORS rules can't exceed maximum of " + strconv.Itoa(maxCORSRules) + " rules.")
			}
			r, err := parseCORSRule(dec, chars)
			if err != nil {
				return nil, err
			}
			rules = append(rules, r)
		case xml.EndElement:
			return rules, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, errXML("Cors holds text: expected CorsRule elements.")
			}
		}
	}
}

// parseCORSRule reads one CorsRule element after its start tag, through
// its end tag. chars counts the characters of all rules.
func parseCORSRule(dec *xml.Decoder, chars *int) (corsRule, error) {
	var r corsRule
	seen := map[string]bool{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return r, errXML(err.Error())
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := t.Name.Local
			switch name {
			case "AllowedOrigins", "AllowedMethods", "AllowedHeaders", "ExposedHeaders", "MaxAgeInSeconds":
			default:
				return r, errXML("Element " + name + " is not allowed in CorsRule.")
			}
			if seen[name] {
				return r, errXML("Element " + name + " is not allowed to be duplicate for CORS rules.")
			}
			seen[name] = true
			text, err := elementText(dec, name)
			if err != nil {
				return r, err
			}
			switch name {
			case "AllowedOrigins":
				err = r.setOrigins(text, chars)
			case "AllowedMethods":
				err = r.setMethods(text, chars)
			case "AllowedHeaders":
				r.allowed, err = parseCORSHeaders(name, text, chars)
			case "ExposedHeaders":
				r.exposed, err = parseCORSHeaders(name, text, chars)
			case "MaxAgeInSeconds":
				err = r.setMaxAge(text, chars)
			}
			if err != nil {
				return r, err
			}
		case xml.EndElement:
			if len(seen) != 5 {
				return r, errXML("CORS required fields are not present: a CorsRule needs AllowedOrigins, AllowedMethods, AllowedHeaders, ExposedHeaders and MaxAgeInSeconds.")
			}
			if *chars > maxCORSRulesChars {
				return r, errXML("CORS rules can't exceed " + strconv.Itoa(maxCORSRulesChars) + " characters of data.")
			}
			return r, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return r, errXML("CorsRule holds text: expected its elements.")
			}
		}
	}
}

// elementText reads the text of a simple element after its start tag,
// through its end tag.
func elementText(dec *xml.Decoder, name string) (string, error) {
	var b []byte
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", errXML(err.Error())
		}
		switch t := tok.(type) {
		case xml.CharData:
			b = append(b, t...)
		case xml.StartElement:
			return "", errXML("Element " + name + " must hold text, not elements.")
		case xml.EndElement:
			return string(b), nil
		}
	}
}

func (r *corsRule) setOrigins(text string, chars *int) error {
	list := strings.Split(text, ",")
	if len(list) > maxCORSOrigins {
		return errXMLNode("AllowedOrigins", "Number of origins can not exceed "+strconv.Itoa(maxCORSOrigins)+".")
	}
	for _, o := range list {
		o = strings.TrimSpace(o)
		n := utf8.RuneCountInString(o)
		*chars += n
		switch {
		case o == "":
			return errXMLNode("AllowedOrigins", "Allowed origins can't contain empty origin.")
		case n > maxCORSValueChars:
			return errXMLNode("AllowedOrigins", "Origin characters can't exceed "+strconv.Itoa(maxCORSValueChars)+".")
		case o == "*":
			r.anyOrigin = true
		case !slices.Contains(r.origins, o):
			r.origins = append(r.origins, o)
		}
	}
	if r.anyOrigin && len(r.origins) > 0 {
		return errXMLNode("AllowedOrigins", "Allowed origins can't have '*' and other origins.")
	}
	return nil
}

func (r *corsRule) setMethods(text string, chars *int) error {
	for _, m := range strings.Split(text, ",") {
		*chars += utf8.RuneCountInString(m)
		m = strings.TrimSpace(m)
		if !slices.Contains(corsMethods, m) {
			return errXMLNode("AllowedMethods", strconv.Quote(m)+" is not an allowed method: use "+strings.Join(corsMethods, ", ")+".")
		}
		if !slices.Contains(r.methods, m) {
			r.methods = append(r.methods, m)
		}
	}
	return nil
}

func (r *corsRule) setMaxAge(text string, chars *int) error {
	*chars += utf8.RuneCountInString(text)
	n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 32)
	if err != nil {
		return errXMLNode("MaxAgeInSeconds", "MaxAgeInSeconds is not a valid integer value.")
	}
	r.maxAge = int(n)
	return nil
}

// parseCORSHeaders reads an AllowedHeaders or ExposedHeaders list; an
// empty list names no header.
func parseCORSHeaders(node, text string, chars *int) (corsHeaders, error) {
	var c corsHeaders
	if text == "" {
		return c, nil
	}
	list := strings.Split(text, ",")
	if len(list) > maxCORSHeaderList {
		return c, errXMLNode(node, "Headers can't exceed maximum header count of "+strconv.Itoa(maxCORSHeaderList)+".")
	}
	literals, prefixed := 0, 0
	for _, h := range list {
		h = strings.TrimSpace(h)
		n := utf8.RuneCountInString(h)
		*chars += n
		if h == "" {
			return c, errXMLNode(node, "CORS headers can't include empty headers.")
		}
		if n > maxCORSValueChars {
			return c, errXMLNode(node, "A CORS header can't exceed "+strconv.Itoa(maxCORSValueChars)+" characters.")
		}
		star := strings.IndexByte(h, '*')
		switch {
		case star < 0:
			if literals++; literals > maxCORSLiteralHeaders {
				return c, errXMLNode(node, "Literal headers can't exceed maximum header count = "+strconv.Itoa(maxCORSLiteralHeaders)+".")
			}
			c.literal = append(c.literal, h)
		case star != len(h)-1:
			return c, errXMLNode(node, "Wildcard can only exist at the end of headers.")
		default:
			if prefixed++; prefixed > maxCORSPrefixedHeaders {
				return c, errXMLNode(node, "Prefixed headers can't exceed maximum header count = "+strconv.Itoa(maxCORSPrefixedHeaders)+".")
			}
			if h == "*" {
				c.all = true
			} else {
				c.prefixes = append(c.prefixes, h[:len(h)-1])
			}
		}
	}
	return c, nil
}

// firstCORSRule returns the first rule that allows origin and method, or
// nil.
func firstCORSRule(rules []corsRule, origin, method string) *corsRule {
	for i := range rules {
		if rules[i].allowsOrigin(origin) && slices.Contains(rules[i].methods, method) {
			return &rules[i]
		}
	}
	return nil
}

// Allows reports whether a rule allows an actual request of method from
// origin.
func (c *Config) Allows(origin, method string) bool {
	return firstCORSRule(c.rules(), origin, method) != nil
}

// Preflight answers a CORS preflight with request headers req: the
// headers of a rule that allows it are set in out, or the error is the
// service's (400 InvalidHeaderValue without Origin or
// Access-Control-Request-Method, 403 CorsPreflightFailure when no rule
// allows it). Credentials, path and query play no part.
func (c *Config) Preflight(req, out http.Header) error {
	origin := req.Get("Origin")
	method := req.Get("Access-Control-Request-Method")
	for _, need := range []struct{ name, value string }{{"Origin", origin}, {"Access-Control-Request-Method", method}} {
		if need.value == "" {
			return newError(codeInvalidHeaderValue, msgCORSMissingHeader+" Missing required CORS header "+need.name+".")
		}
	}
	reqHeaders := strings.Join(req.Values("Access-Control-Request-Headers"), ",")
	rule := firstCORSRule(c.rules(), origin, method)
	switch {
	case rule == nil:
		return newError(codeCorsPreflightFailure, msgCORSPreflightFailure+" No CORS rule allows origin "+strconv.Quote(origin)+" with method "+strconv.Quote(method)+".")
	case !rule.allowsHeaders(reqHeaders):
		return newError(codeCorsPreflightFailure, msgCORSPreflightFailure+" The first CORS rule that allows origin "+strconv.Quote(origin)+" with method "+strconv.Quote(method)+" does not allow the headers "+strconv.Quote(reqHeaders)+".")
	}
	out.Set("Access-Control-Allow-Origin", origin)
	out.Set("Access-Control-Allow-Methods", method)
	if reqHeaders != "" {
		out.Set("Access-Control-Allow-Headers", reqHeaders)
	}
	out.Set("Access-Control-Max-Age", strconv.Itoa(rule.maxAge))
	out.Set("Access-Control-Allow-Credentials", "true")
	out.Set("Content-Length", "0")
	return nil
}

// AddHeaders adds to h, the headers of the response to an actual request
// with method and headers req, the Access-Control headers, just
// before the status is sent, so that they cover error responses too and
// expose the headers the response carries. As the service: a rule for
// every origin answers "*"; a rule naming the origin answers it, with
// credentials allowed; and a GET or HEAD, whose response a browser may
// cache, varies on Origin unless "*" answered it.
func (c *Config) AddHeaders(method string, req, h http.Header) {
	rules := c.rules()
	if len(rules) == 0 {
		return
	}
	origin := req.Get("Origin")
	cacheable := method == http.MethodGet || method == http.MethodHead
	if origin == "" && !cacheable {
		return
	}
	rule := firstCORSRule(rules, origin, method)
	switch {
	case rule != nil && rule.anyOrigin:
		if v := rule.exposeList(h); v != "" {
			h.Set("Access-Control-Expose-Headers", v)
		}
		h.Set("Access-Control-Allow-Origin", "*")
		return
	case rule != nil && origin != "":
		if v := rule.exposeList(h); v != "" {
			h.Set("Access-Control-Expose-Headers", v)
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
	}
	if cacheable {
		h.Add("Vary", "Origin")
	}
}
