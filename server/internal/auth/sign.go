package auth

// This file computes the strings the Azure Storage services sign: Shared
// Key and Shared Key Lite for the Table service, service SAS and account
// SAS.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Sign returns Base64(HMAC-SHA256(key, s)).
func Sign(key []byte, s string) string {
	p := macPool(key)
	m := p.Get().(hash.Hash)
	m.Reset()
	io.WriteString(m, s)
	var sum [sha256.Size]byte
	sig := base64.StdEncoding.EncodeToString(m.Sum(sum[:0]))
	p.Put(m)
	return sig
}

// macs holds, per key, HMAC-SHA256 states keyed with it: keying one
// hashes the key into its pads, which every request signed with an
// account's key would otherwise redo. An account has one key, so the
// map stays small; past maxMACKeys keys, new keys get pools of their own
// that the map does not keep.
var macs struct {
	sync.RWMutex
	pools map[string]*sync.Pool
}

const maxMACKeys = 64

// macPool returns the pool of HMAC-SHA256 states keyed with key.
func macPool(key []byte) *sync.Pool {
	macs.RLock()
	p := macs.pools[string(key)]
	macs.RUnlock()
	if p != nil {
		return p
	}
	k := string(key)
	p = &sync.Pool{New: func() any { return hmac.New(sha256.New, []byte(k)) }}
	macs.Lock()
	defer macs.Unlock()
	if q := macs.pools[k]; q != nil {
		return q
	}
	if len(macs.pools) < maxMACKeys {
		if macs.pools == nil {
			macs.pools = make(map[string]*sync.Pool)
		}
		macs.pools[k] = p
	}
	return p
}

// Equal compares two base64 signatures in constant time.
func Equal(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }

// CanonicalizedResource is "/" + account + the request path exactly as
// sent, plus "?comp=<v>" when the query has comp.
func CanonicalizedResource(account string, u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	cr := "/" + account + p
	if q, err := url.ParseQuery(u.RawQuery); err == nil {
		if v, ok := q["comp"]; ok && len(v) > 0 {
			cr += "?comp=" + v[0]
		}
	} else if v := firstComp(u.RawQuery); v != "" {
		cr += "?comp=" + v
	}
	return cr
}

// firstComp finds comp in a query that url.ParseQuery rejects.
func firstComp(raw string) string {
	for _, kv := range strings.Split(raw, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && k == "comp" {
			if u, err := url.QueryUnescape(v); err == nil {
				return u
			}
			return v
		}
	}
	return ""
}

// date returns the request's x-ms-date, or its Date.
func date(h http.Header) string {
	if d := h.Get("x-ms-date"); d != "" {
		return d
	}
	return h.Get("Date")
}

// SharedKeyLiteString is what a Table SharedKeyLite signature signs:
// Date + "\n" + CanonicalizedResource.
func SharedKeyLiteString(account string, r *http.Request) string {
	return date(r.Header) + "\n" + CanonicalizedResource(account, r.URL)
}

// SharedKeyString is what a Table SharedKey signature signs:
// VERB\nContent-MD5\nContent-Type\nDate\nCanonicalizedResource, the Date
// being x-ms-date when present.
func SharedKeyString(account string, r *http.Request) string {
	return strings.Join([]string{
		r.Method,
		r.Header.Get("Content-MD5"),
		r.Header.Get("Content-Type"),
		date(r.Header),
		CanonicalizedResource(account, r.URL),
	}, "\n")
}

// ServiceSASString is what a Table service SAS signs, from the (decoded)
// query parameters:
// sp\nst\nse\n/table/<acct>/<lowercase tn>\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk.
func ServiceSASString(account string, q url.Values) string {
	return strings.Join([]string{
		q.Get("sp"),
		q.Get("st"),
		q.Get("se"),
		"/table/" + account + "/" + strings.ToLower(q.Get("tn")),
		q.Get("si"),
		q.Get("sip"),
		q.Get("spr"),
		q.Get("sv"),
		q.Get("spk"),
		q.Get("srk"),
		q.Get("epk"),
		q.Get("erk"),
	}, "\n")
}

// AccountSASString is what an account SAS signs:
// acct\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n, and from version
// 2020-12-06 (which the newer SDKs and the Azure CLI sign) one more line,
// the signed encryption scope ses: ...\nsv\nses\n.
func AccountSASString(account string, q url.Values) string {
	fields := []string{
		account,
		q.Get("sp"),
		q.Get("ss"),
		q.Get("srt"),
		q.Get("st"),
		q.Get("se"),
		q.Get("sip"),
		q.Get("spr"),
		q.Get("sv"),
	}
	if q.Get("sv") >= "2020-12-06" { // versions are dates: they compare as strings
		fields = append(fields, q.Get("ses"))
	}
	return strings.Join(append(fields, ""), "\n")
}
