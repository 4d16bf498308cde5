package auth

import (
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/localtable/localtable"
	"github.com/localtable/localtable/internal/odata"
)

// Grant is what a verified shared access signature allows.
type Grant struct {
	accountSAS    bool
	perms         string // service SAS: raud; account SAS: rwdlacup
	resourceTypes string // account SAS: s, c, o
	table         string // service SAS: the table

	hasRange bool
	rng      localtable.KeyRange // service SAS: the keys it may touch
}

// KeyRange returns the key range a service SAS restricts entities to.
func (g *Grant) KeyRange() (localtable.KeyRange, bool) {
	if g == nil || !g.hasRange {
		return localtable.KeyRange{}, false
	}
	return g.rng, true
}

// sasParams are the query parameters of a shared access signature; none
// may be given twice.
var sasParams = []string{"sv", "ss", "srt", "sp", "st", "se", "sip", "spr", "sig", "si", "tn", "spk", "srk", "epk", "erk", "ses"}

// ParseSASTime parses a SAS start or expiry in the forms the SDKs write:
// RFC 3339, to the minute ("2006-01-02T15:04Z"), or a date.
func ParseSASTime(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// verifySAS checks a service or account SAS: its signature, validity
// window, protocol and IP range, and for a service SAS naming a stored
// access policy (si), the table's policy.
func verifySAS(req *Request) (*Grant, error) {
	q := req.Query
	for _, k := range sasParams {
		if len(q[k]) > 1 {
			// As the service: a SAS whose parameters repeat is refused.
			return nil, newError(codeAuthorizationFailure,
				authFailedMessage+" The shared access signature parameter "+odata.Quote(k)+" is given more than once.")
		}
	}
	g := &Grant{perms: q.Get("sp")}
	var toSign string
	switch {
	case q.Has("ss") || q.Has("srt"):
		g.accountSAS = true
		g.resourceTypes = q.Get("srt")
		toSign = AccountSASString(req.Account, q)
		if !strings.Contains(q.Get("ss"), "t") {
			return nil, newError(codeAuthorizationServiceMismatch, "This request is not authorized to perform this operation using this service. The account SAS's signed services "+odata.Quote(q.Get("ss"))+" do not include 't'.")
		}
	case q.Get("tn") == "":
		// A service SAS names its table. The service refuses a SAS
		// missing a mandatory field at authentication, 403
		// AuthenticationFailed with the detail "<field> is mandatory.
		// Cannot be empty" (as recorded in github.com/Azure/
		// azure-storage-python issues 297 and 301, for sr and sv).
		return nil, errAuthentication("tn is mandatory. Cannot be empty (a service SAS names its table; an account SAS has ss and srt).")
	default:
		g.table = q.Get("tn")
		toSign = ServiceSASString(req.Account, q)
	}
	if !req.signedWith(toSign, q.Get("sig")) {
		return nil, errAuthentication("Signature did not match. String to sign used was " + odata.Quote(toSign) + ".")
	}
	start, expiry := q.Get("st"), q.Get("se")
	if si := q.Get("si"); si != "" && !g.accountSAS {
		p, ok := req.Policy(g.table, si)
		if !ok {
			return nil, errAuthentication("The SAS names the stored access policy " + odata.Quote(si) + " (si), which table " + odata.Quote(g.table) + " does not have.")
		}
		if (start != "" && !p.Start.IsZero()) || (expiry != "" && !p.Expiry.IsZero()) || (g.perms != "" && p.Permission != "") {
			return nil, errAuthentication("A field is given both in the signature and in stored access policy " + odata.Quote(si) + ".")
		}
		if !p.Start.IsZero() {
			start = p.Start.UTC().Format(time.RFC3339Nano)
		}
		if !p.Expiry.IsZero() {
			expiry = p.Expiry.UTC().Format(time.RFC3339Nano)
		}
		if p.Permission != "" {
			g.perms = p.Permission
		}
	}
	now := req.Now()
	if start != "" {
		t, ok := ParseSASTime(start)
		if !ok {
			return nil, errAuthentication("The signed start time " + odata.Quote(start) + " is not valid.")
		}
		if now.Before(t) {
			return nil, errAuthentication("Signed start time " + odata.Quote(start) + " is in the future.")
		}
	}
	if expiry == "" {
		return nil, errAuthentication("The shared access signature has no expiry (se), directly or through a stored access policy.")
	}
	if t, ok := ParseSASTime(expiry); !ok {
		return nil, errAuthentication("The signed expiry time " + odata.Quote(expiry) + " is not valid.")
	} else if !now.Before(t) {
		return nil, errAuthentication("Signed expiry time " + odata.Quote(expiry) + " has passed.")
	}
	if sip := q.Get("sip"); sip != "" && !ipAllowed(sip, req.HTTP.RemoteAddr) {
		return nil, newError(codeAuthorizationSourceIPMismatch, "This request is not authorized to perform this operation using this source IP "+clientIP(req.HTTP.RemoteAddr)+".")
	}
	switch spr := q.Get("spr"); spr {
	case "", "https,http", "http,https":
	case "https":
		if req.HTTP.TLS == nil {
			// aztables' GetAccountSASURL always signs spr=https: such a
			// SAS works only against an HTTPS server (localtabletest.WithTLS).
			return nil, newError(codeAuthorizationProtocolMismatch, "This request is not authorized to perform this operation using this protocol. The SAS allows HTTPS only (spr=https) and the request came over HTTP.")
		}
	default:
		return nil, errAuthentication("The signed protocol " + odata.Quote(spr) + " is not valid: spr is https or https,http.")
	}
	if !g.accountSAS {
		g.rng, g.hasRange = sasRange(q.Get("spk"), q.Get("srk"), q.Get("epk"), q.Get("erk"))
	}
	return g, nil
}

// sasRange returns the key range of spk/srk (inclusive start) and epk/erk
// (inclusive end).
func sasRange(spk, srk, epk, erk string) (localtable.KeyRange, bool) {
	var r localtable.KeyRange
	switch {
	case spk != "" && srk != "":
		r.Start = localtable.KeyAt(spk, srk)
	case spk != "":
		r.Start = localtable.PartitionStart(spk)
	}
	switch {
	case epk != "" && erk != "":
		r.End = localtable.KeyAfter(epk, erk)
	case epk != "":
		r.End = localtable.PartitionEnd(epk)
	}
	return r, !r.Start.IsZero() || !r.End.IsZero()
}

// clientIP returns the host part of a remote address.
func clientIP(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}

func ipAllowed(sip, remote string) bool {
	ip, err := netip.ParseAddr(clientIP(remote))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	lo, hi, isRange := strings.Cut(sip, "-")
	a, err1 := netip.ParseAddr(lo)
	if !isRange {
		return err1 == nil && a == ip
	}
	b, err2 := netip.ParseAddr(hi)
	return err1 == nil && err2 == nil && a.Compare(ip) <= 0 && ip.Compare(b) <= 0
}

// rangePredicate restricts a query to a key range: a SAS's range is
// enforced on queries by intersecting it with the filter.
type rangePredicate struct {
	inner localtable.Predicate // nil: all
	r     localtable.KeyRange
}

// Restrict returns p restricted to the keys of r, as a query with a
// service SAS that has a key range is.
func Restrict(p localtable.Predicate, r localtable.KeyRange) localtable.Predicate {
	rp := &rangePredicate{inner: p, r: r}
	if _, ok := p.(localtable.ReaderPredicate); ok || p == nil {
		return &readerRangePredicate{rp} // scans match on the stored record
	}
	return rp
}

// readerRangePredicate is a rangePredicate whose inner predicate (if any)
// can match on the stored record too, so a SAS-restricted scan decodes
// only the entities it returns.
type readerRangePredicate struct{ *rangePredicate }

// MatchReader is Match on a PropertyReader.
func (p *readerRangePredicate) MatchReader(r localtable.PropertyReader) bool {
	pk, ok1 := r.Property(localtable.PartitionKeyName)
	rk, ok2 := r.Property(localtable.RowKeyName)
	if !ok1 || !ok2 || !p.r.Contains(pk.String(), rk.String()) {
		return false
	}
	return p.inner == nil || p.inner.(localtable.ReaderPredicate).MatchReader(r)
}

// MatchInRanges is MatchReader for an entity within KeyRanges' ranges
// (see localtable.RangeReaderPredicate): they lie within the SAS's range
// and within the inner predicate's ranges, so neither the range nor what
// the inner predicate's ranges decide is checked again.
func (p *readerRangePredicate) MatchInRanges(r localtable.PropertyReader) bool {
	switch inner := p.inner.(type) {
	case nil:
		return true
	case localtable.RangeReaderPredicate:
		return inner.MatchInRanges(r)
	}
	return p.inner.(localtable.ReaderPredicate).MatchReader(r)
}

// Match reports whether e is in the range and matches the inner predicate.
func (p *rangePredicate) Match(e *localtable.Entity) bool {
	return p.r.Contains(e.PartitionKey, e.RowKey) && (p.inner == nil || p.inner.Match(e))
}

// KeyRanges intersects the inner predicate's key ranges with the range.
func (p *rangePredicate) KeyRanges() ([]localtable.KeyRange, bool) {
	if p.inner == nil {
		return []localtable.KeyRange{p.r}, true
	}
	rs, ok := p.inner.KeyRanges()
	if !ok {
		return []localtable.KeyRange{p.r}, true
	}
	var out []localtable.KeyRange
	for _, x := range rs {
		if x, ok := x.Intersect(p.r); ok {
			out = append(out, x)
		}
	}
	return out, true
}

// String is the inner predicate's filter text.
func (p *rangePredicate) String() string {
	if p.inner == nil {
		return ""
	}
	return p.inner.String()
}
