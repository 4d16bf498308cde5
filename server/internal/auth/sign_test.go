package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"sync"
	"testing"
)

// The golden vector of docs/protocol.md §8, from the aztables tests.
func TestServiceSASGolden(t *testing.T) {
	q := url.Values{}
	q.Set("sp", "r")
	q.Set("st", "2023-11-08T15:04:05Z")
	q.Set("se", "2023-11-08T16:04:05Z")
	q.Set("spr", "https")
	q.Set("tn", "fake-table")
	q.Set("sv", "2019-02-02")
	key := []byte(base64.StdEncoding.EncodeToString([]byte("fake-key")))
	dec, err := base64.StdEncoding.DecodeString(string(key))
	if err != nil {
		t.Fatal(err)
	}
	got := Sign(dec, ServiceSASString("fake-account", q))
	const want = "WLeRe04Jnm2q7wuetbkWgFDtdWg+iE7RKwUSLbecPjE="
	if got != want {
		t.Fatalf("sig = %s, want %s\nstring to sign: %q", got, want, ServiceSASString("fake-account", q))
	}
}

func TestCanonicalizedResource(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:10002/devstoreaccount1/Tables?comp=acl&x=1")
	if got, want := CanonicalizedResource("devstoreaccount1", u), "/devstoreaccount1/devstoreaccount1/Tables?comp=acl"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	u, _ = url.Parse("http://h/devstoreaccount1/t1(PartitionKey='a%2Fb',RowKey='')")
	if got, want := CanonicalizedResource("devstoreaccount1", u), "/devstoreaccount1/devstoreaccount1/t1(PartitionKey='a%2Fb',RowKey='')"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestAccountSASStringVersions(t *testing.T) {
	q := url.Values{"sp": {"rl"}, "ss": {"t"}, "srt": {"sco"}, "se": {"2030-01-01T00:00:00Z"}, "spr": {"https"}, "ses": {"scope1"}}
	q.Set("sv", "2019-02-02")
	if got, want := AccountSASString("acct", q), "acct\nrl\nt\nsco\n\n2030-01-01T00:00:00Z\n\nhttps\n2019-02-02\n"; got != want {
		t.Errorf("2019-02-02: %q, want %q", got, want)
	}
	q.Set("sv", "2020-12-06")
	if got, want := AccountSASString("acct", q), "acct\nrl\nt\nsco\n\n2030-01-01T00:00:00Z\n\nhttps\n2020-12-06\nscope1\n"; got != want {
		t.Errorf("2020-12-06: %q, want %q", got, want)
	}
}

// Sign, with its states pooled per key, signs as a fresh HMAC does, for
// keys used concurrently and more keys than the pool map keeps (run with
// -race).
func TestSignPooledStates(t *testing.T) {
	fresh := func(key []byte, s string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range maxMACKeys * 3 {
				key := []byte(fmt.Sprintf("key-%d", (i*7+g)%(maxMACKeys*2)))
				s := fmt.Sprintf("GET\n\n\n%d\n/account/table", i)
				if got, want := Sign(key, s), fresh(key, s); got != want {
					t.Errorf("Sign(%s, %q) = %s, want %s", key, s, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
