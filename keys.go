package localtable

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Key helpers for the key designs of the Table service's design patterns.
// Keys sort as strings, ordinally by UTF-16 code unit; these functions make
// strings whose order is the order of the values they stand for, and read
// them back. They are plain string functions: they read no table.

// int64KeyDigits is the width of an Int64Key's digits: MaxInt64 has 19.
const int64KeyDigits = 19

// Int64Key returns a key string for n whose order is n's numeric order,
// for every int64: Int64Key(a) < Int64Key(b) exactly when a < b.
//
// n >= 0 is written as 19 decimal digits, zero-padded: 42 is
// "0000000000000000042". n < 0 is written as "-" and the nines' complement
// of |n| in 19 digits (each digit d of |n| written as 9-d), so that the
// more negative sorts first and every negative before every non-negative:
// -1 is "-9999999999999999998", -42 is "-9999999999999999957", and
// math.MinInt64 is "-0776627963145224191". The result
// is a valid PartitionKey or RowKey, alone or as part of a longer key.
func Int64Key(n int64) string {
	var b [1 + int64KeyDigits]byte
	if n >= 0 {
		return string(appendPadded(b[:0], uint64(n)))
	}
	mag := uint64(-(n + 1)) + 1 // |n|, also for MinInt64
	out := appendPadded(append(b[:0], '-'), mag)
	for i := 1; i < len(out); i++ {
		out[i] = '0' + '9' - out[i]
	}
	return string(out)
}

// appendPadded appends v as int64KeyDigits decimal digits.
func appendPadded(b []byte, v uint64) []byte {
	start := len(b)
	b = append(b, "0000000000000000000"...)
	for i := len(b) - 1; v > 0 && i >= start; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return b
}

// ParseInt64Key returns the n of Int64Key(n). Anything else, even a number
// written another way, is ErrInvalidInput.
func ParseInt64Key(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	if len(digits) != int64KeyDigits || !allDigits(digits) {
		return 0, newError(ErrInvalidInput, "%q is not an Int64Key: want 19 digits, or - and 19 digits", abbrev(s))
	}
	if !neg {
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return 0, newError(ErrInvalidInput, "%q is not an Int64Key: it exceeds the largest int64", abbrev(s))
		}
		return n, nil
	}
	mag := []byte(digits)
	for i, c := range mag {
		mag[i] = '0' + '9' - c
	}
	m, err := strconv.ParseUint(string(mag), 10, 64)
	if err != nil || m == 0 || m > 1<<63 {
		return 0, newError(ErrInvalidInput, "%q is not an Int64Key: its magnitude is outside 1..2^63", abbrev(s))
	}
	return -int64(m-1) - 1, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maxDotNetTicks is .NET's DateTime.MaxValue.Ticks, 9999-12-31
// 23:59:59.9999999 in 100 ns ticks since 0001-01-01.
const maxDotNetTicks = 3_155_378_975_999_999_999

// InvertedTicksKey returns a key string that sorts newer times first, for
// the log tail pattern: RowKeys that put the latest entity at the start of
// its partition, where a query with Limit 1 reads it alone.
//
// It is the service's documented form: 19 decimal digits, zero-padded, of
// .NET's DateTime.MaxValue.Ticks minus t's ticks (100 ns since
// 0001-01-01T00:00:00Z), so keys made by .NET code the same way interleave
// with these. t is truncated to 100 ns, so times within the same 100 ns
// share a key: add a unique suffix (CompoundKey) where that can happen.
// Times before year 1 or after 9999 are clamped to those years' ends.
func InvertedTicksKey(t time.Time) string {
	ticks := TimeToTicks(t) // saturates outside years 1..9999
	ticks = max(0, min(ticks, maxDotNetTicks))
	var b [int64KeyDigits]byte
	return string(appendPadded(b[:0], uint64(maxDotNetTicks-ticks)))
}

// ParseInvertedTicksKey returns the time, in UTC, that InvertedTicksKey
// made s from. Anything that is not 19 digits within the range of ticks is
// ErrInvalidInput.
func ParseInvertedTicksKey(s string) (time.Time, error) {
	if len(s) != int64KeyDigits || !allDigits(s) {
		return time.Time{}, newError(ErrInvalidInput, "%q is not an inverted-ticks key: want 19 digits", abbrev(s))
	}
	inv, err := strconv.ParseInt(s, 10, 64)
	if err != nil || inv > maxDotNetTicks {
		return time.Time{}, newError(ErrInvalidInput, "%q is not an inverted-ticks key: it exceeds %d", abbrev(s), int64(maxDotNetTicks))
	}
	return TicksToTime(maxDotNetTicks - inv), nil
}

// CompoundKeySeparator is the character CompoundKey puts between parts. It
// is the smallest character a key may hold after the space, so that a part
// sorts before its extensions.
const CompoundKeySeparator = '!'

// compoundEscapes are the escaped regions of CompoundKey: each character
// in [lo, hi] is written as the region's prefix and two hexadecimal
// digits. Each region holds its prefix, so every character that sorts
// between a region's characters is in it, and the escapes sort where the
// characters they stand for do.
var compoundEscapes = [...]struct {
	lo, hi rune
	prefix byte
}{
	{0x00, 0x23, '"'}, // control characters, space, ! (the separator), ", #
	{0x2E, 0x2F, '.'}, // . and /
	{0x3E, 0x3F, '>'}, // > and ?
	{0x5B, 0x5C, '['}, // [ and \
	{0x7E, 0x9F, '~'}, // ~, DEL and the C1 control characters
}

// compoundRawByte follows the prefix '~' for a byte that is not valid
// UTF-8; it sorts after the hexadecimal digits of the '~' region.
const compoundRawByte = 'x'

const upperHex = "0123456789ABCDEF"

// CompoundKey joins parts into one key string that is always a valid
// PartitionKey or RowKey character-wise (its length may still exceed the
// key limit of 512 UTF-16 code units), that SplitCompoundKey splits back
// into the same parts, and whose order is the parts' order: keys compare
// as their parts do, part by part, and a key sorts before the keys that
// extend its parts, so CompoundKey("a", "b") < CompoundKey("a", "c") and
// CompoundKey("a") < CompoundKey("a", "") < CompoundKey("a", "b") <
// CompoundKey("ab").
//
// Parts are separated by '!' (CompoundKeySeparator). Characters that keys
// may not hold, the separator, and the few characters that sort among them
// are written as a prefix character and two uppercase hexadecimal digits
// of their code point: U+0000–U+0023 (the control characters, space, ! " #)
// as `"00`–`"23`; . and / as .2E and .2F; > and ? as >3E and >3F; [ and \
// as [5B and [5C; ~ and U+007F–U+009F as ~7E–~9F. Every other character is
// written as itself, so "order-2024", "Smith" and "José" are unchanged. A
// byte of a part that is not valid UTF-8 is written as ~x and two
// hexadecimal digits; order among such parts is not meaningful.
//
// CompoundKey() is "", as is CompoundKey(""): SplitCompoundKey("") is one
// empty part.
func CompoundKey(parts ...string) string {
	var b strings.Builder
	n := len(parts)
	for _, p := range parts {
		n += len(p)
	}
	b.Grow(n)
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(CompoundKeySeparator)
		}
		appendCompoundPart(&b, p)
	}
	return b.String()
}

func appendCompoundPart(b *strings.Builder, p string) {
	for i := 0; i < len(p); {
		r, w := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && w == 1 {
			c := p[i]
			b.WriteByte('~')
			b.WriteByte(compoundRawByte)
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&0xF])
			i++
			continue
		}
		if prefix, ok := compoundPrefix(r); ok {
			b.WriteByte(prefix)
			b.WriteByte(upperHex[r>>4])
			b.WriteByte(upperHex[r&0xF])
		} else {
			b.WriteString(p[i : i+w])
		}
		i += w
	}
}

// compoundPrefix returns the escape prefix of r, if r is escaped.
func compoundPrefix(r rune) (byte, bool) {
	if r > 0x9F {
		return 0, false
	}
	for _, e := range compoundEscapes {
		if r >= e.lo && r <= e.hi {
			return e.prefix, true
		}
	}
	return 0, false
}

// SplitCompoundKey returns the parts that CompoundKey joined into key. A
// string that CompoundKey cannot have made (an unknown escape, a character
// that should have been escaped, an escape that was not needed) is
// ErrInvalidInput.
func SplitCompoundKey(key string) ([]string, error) {
	bad := func(i int, why string) error {
		return newError(ErrInvalidInput, "%q is not a compound key: %s at byte %d", abbrev(key), why, i)
	}
	parts := make([]string, 0, 1+strings.Count(key, string(CompoundKeySeparator)))
	var cur []byte
	sawRaw := false
	for i := 0; i < len(key); {
		c := key[i]
		if c == CompoundKeySeparator {
			parts = append(parts, string(cur))
			cur = cur[:0]
			i++
			continue
		}
		region := -1
		for k, e := range compoundEscapes {
			if c == e.prefix {
				region = k
				break
			}
		}
		if region < 0 {
			r, w := utf8.DecodeRuneInString(key[i:])
			if r == utf8.RuneError && w == 1 {
				return nil, bad(i, "invalid UTF-8")
			}
			if _, esc := compoundPrefix(r); esc {
				return nil, bad(i, "unescaped "+strconv.QuoteRune(r))
			}
			cur = append(cur, key[i:i+w]...)
			i += w
			continue
		}
		raw := c == '~' && i+1 < len(key) && key[i+1] == compoundRawByte
		start := i + 1
		if raw {
			start++
		}
		if start+2 > len(key) {
			return nil, bad(i, "truncated escape")
		}
		hi, ok1 := unhex(key[start])
		lo, ok2 := unhex(key[start+1])
		if !ok1 || !ok2 {
			return nil, bad(i, "bad escape")
		}
		v := hi<<4 | lo
		if raw {
			// Only a byte that is not valid UTF-8 where it stands is
			// escaped raw; that is checked once the parts are whole.
			if v < 0x80 {
				return nil, bad(i, "raw escape of an ASCII byte")
			}
			sawRaw = true
			cur = append(cur, v)
		} else {
			e := compoundEscapes[region]
			if rune(v) < e.lo || rune(v) > e.hi {
				return nil, bad(i, "escape outside its region")
			}
			cur = utf8.AppendRune(cur, rune(v))
		}
		i = start + 2
	}
	parts = append(parts, string(cur))
	// Raw bytes that form valid UTF-8 would have been written as the
	// characters they form: such a key is not one CompoundKey makes.
	if sawRaw && CompoundKey(parts...) != key {
		return nil, bad(0, "raw escapes of valid UTF-8")
	}
	return parts, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// CompoundKeyRange returns the bounds [lo, hi) of the keys CompoundKey
// makes from parts followed by one or more further parts: every
// CompoundKey(parts..., more...) with len(more) > 0 lies in it, and no
// other key CompoundKey makes does. As RowKey bounds (RowKey ge lo and
// RowKey lt hi) they select, for example, every review of one employee
// keyed CompoundKey(employee, year).
func CompoundKeyRange(parts ...string) (lo, hi string) {
	p := CompoundKey(parts...)
	return p + string(CompoundKeySeparator), p + string(CompoundKeySeparator+1)
}
