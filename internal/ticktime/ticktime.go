// Package ticktime formats the data model's times, 100 ns ticks since
// 0001-01-01T00:00:00Z (the proleptic Gregorian calendar, UTC), straight
// from the ticks: the DateTime values and Timestamps of every entity read
// are formatted, and going through time.Time and its Format costs several
// times more.
package ticktime

// PerSecond is the number of ticks in a second.
const PerSecond = 10_000_000

// Max is the ticks of 9999-12-31T23:59:59.9999999Z, the latest time the
// data model holds.
const Max = 3155378975999999999

// Date returns the date of the day that is days after 0001-01-01. It is
// Howard Hinnant's civil_from_days, on days counted from 0000-03-01 so
// that a leap day ends its year.
func Date(days uint64) (year, month, day uint64) {
	z := days + 306 // 0000-03-01 is 306 days before 0001-01-01
	era := z / 146097
	doe := z - era*146097                                  // the day of the era, [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // the year of the era, [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // the day of the year from March 1, [0, 365]
	mp := (5*doy + 2) / 153                                // the month from March, [0, 11]
	day = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		month = mp + 3
	} else {
		month = mp - 9
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// Append appends ticks, which must be in [0, Max], as
// yyyy-MM-ddTHH:mm:ss.fffffffZ. With fixed, the fraction has exactly
// seven digits, as the service writes Timestamp; otherwise its trailing
// zeros are dropped, and the dot with them when it is zero, as the
// service writes an Edm.DateTime. colon separates the hours, minutes and
// seconds (":", or "%3A" in an ETag).
func Append(b []byte, ticks int64, fixed bool, colon string) []byte {
	sec := uint64(ticks) / PerSecond
	frac := uint64(ticks) % PerSecond
	y, mo, d := Date(sec / 86400)
	sod := sec % 86400
	b = append2(b, y/100)
	b = append2(b, y%100)
	b = append(b, '-')
	b = append2(b, mo)
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, sod/3600)
	b = append(b, colon...)
	b = append2(b, sod/60%60)
	b = append(b, colon...)
	b = append2(b, sod%60)
	if fixed || frac != 0 {
		b = append(b, '.')
		n := len(b)
		b = append2(b, frac/100_000)
		b = append2(b, frac/1000%100)
		b = append2(b, frac/10%100)
		b = append(b, byte('0'+frac%10))
		if !fixed {
			for b[len(b)-1] == '0' && len(b) > n {
				b = b[:len(b)-1]
			}
		}
	}
	return append(b, 'Z')
}

// append2 appends n, 0 <= n < 100, as two decimal digits.
func append2(b []byte, n uint64) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}
