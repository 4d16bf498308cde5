package cli

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// hostFlags collects repeated --allow-host names.
type hostFlags []string

// String is the flag's default text: none.
func (h *hostFlags) String() string { return "" }

// Set adds one host name, without a port.
func (h *hostFlags) Set(v string) error {
	name := normalHost(v)
	if name == "" || (strings.ContainsAny(name, ":/ ") && !isIPv6(name)) {
		return fmt.Errorf("%q: want a host name or address, without a port", v)
	}
	*h = append(*h, name)
	return nil
}

// isIPv6 reports whether s is an IPv6 address.
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6()
}

// normalHost lower-cases a host name and drops the brackets of an IPv6
// address and a trailing dot.
func normalHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return h
}

// isLoopbackHost reports whether a host name (normalHost) names this
// machine whatever a DNS server says: localhost and its subdomains (RFC
// 6761 reserves them for loopback) and the loopback addresses,
// 127.0.0.0/8 and ::1.
func isLoopbackHost(h string) bool {
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(h)
	return err == nil && a.Unmap().IsLoopback()
}

// checkHost guards a server against DNS rebinding: a page on a site whose
// name an attacker re-points at 127.0.0.1 is, for the browser, of the
// same origin as the server, and could read and write through it. Such a
// request carries the attacker's name in Host; checkHost refuses (403) a
// request whose Host is neither a loopback name nor one of allowed. A
// request without Host (HTTP/1.0) is not a browser's and passes.
func checkHost(h http.Handler, allowed []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if hn, _, err := net.SplitHostPort(host); err == nil {
			host = hn
		}
		host = normalHost(host)
		if host != "" && !isLoopbackHost(host) && !slices.Contains(allowed, host) {
			http.Error(w, fmt.Sprintf("localtable: Host %q refused: this server answers loopback names only (localhost, *.localhost, 127.0.0.1, [::1]), against DNS rebinding; serve with --allow-host %s to accept it", r.Host, host), http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
