package markdown

import (
	"strconv"
	"strings"
	"time"
	"unicode"
)

// commonTimezones are the abbreviations the reference accepts in
// <time:...>, with their offsets in seconds.
var commonTimezones = map[string]int{
	"SST": -39600, "HST": -36000, "AKST": -32400, "HDT": -32400, "AKDT": -28800, "PST": -28800,
	"MST": -25200, "PDT": -25200, "CST": -21600, "MDT": -21600, "CDT": -18000, "EST": -18000,
	"AST": -14400, "EDT": -14400, "NST": -12600, "ADT": -10800, "NDT": -9000, "GMT": 0, "UTC": 0,
	"WET": 0, "BST": 3600, "CET": 3600, "MET": 3600, "WAT": 3600, "WEST": 3600, "CAT": 7200,
	"CEST": 7200, "EET": 7200, "MEST": 7200, "SAST": 7200, "EAT": 10800, "EEST": 10800,
	"IDT": 10800, "MSK": 10800, "PKT": 18000, "IST": 19800, "WIB": 25200, "AWST": 28800,
	"HKT": 28800, "WITA": 28800, "JST": 32400, "KST": 32400, "WIT": 32400, "ACST": 34200,
	"AEST": 36000, "ChST": 36000, "ACDT": 37800, "AEDT": 39600, "NZST": 43200, "NZDT": 46800,
	"Z": 0,
}

func findTimestamp(p *inlineProc, s string, from int) (imatch, bool) {
	i := strings.Index(s[from:], "<time:")
	if i < 0 {
		return imatch{}, false
	}
	i += from
	j := strings.IndexByte(s[i+6:], '>')
	if j < 0 {
		return imatch{}, false
	}
	return imatch{start: i, end: i + 6 + j + 1, g: []string{s[i+6 : i+6+j]}}, true
}

func handleTimestamp(p *inlineProc, m imatch, _ int) (string, bool) {
	in := m.g[0]
	t, ok := parseTimestamp(in)
	if !ok {
		return `<span class="timestamp-error">` + escapeText("Invalid time format: "+in) + "</span>", true
	}
	return `<time datetime="` + formatISO(t) + `">` + escapeText(in) + "</time>", true
}

func formatISO(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02T15:04:05.000000") + "Z"
	}
	return t.Format("2006-01-02T15:04:05") + "Z"
}

// parseTimestamp reads the formats people write in <time:...>: ISO 8601,
// a Unix time, or a date in words ("Jun 5th 2017, 10:30PM", "31 Dec 2017
// 5:30 am IST"). Times without a zone are UTC.
func parseTimestamp(in string) (time.Time, bool) {
	s := strings.TrimSpace(in)
	if s == "" {
		return time.Time{}, false
	}
	if t, ok := parseISO(s); ok {
		return checkYear(t)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "eEnN") {
		if f < -62135596800 || f > 253402300799 {
			return time.Time{}, false
		}
		sec := int64(f)
		return time.Unix(sec, int64((f-float64(sec))*1e9)).UTC(), true
	}
	if t, ok := parseWords(s); ok {
		return checkYear(t)
	}
	return time.Time{}, false
}

func checkYear(t time.Time) (time.Time, bool) {
	u := t.UTC()
	if u.Year() < 1 || u.Year() > 9999 {
		return time.Time{}, false
	}
	return t, true
}

var isoLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
}

func parseISO(s string) (time.Time, bool) {
	// Offsets of a day or more are invalid, as in the reference.
	if i := strings.LastIndexAny(s, "+-"); i > 10 && len(s)-i >= 3 {
		if h, err := strconv.Atoi(s[i+1 : i+3]); err == nil && h >= 24 {
			return time.Time{}, false
		}
	}
	for _, l := range isoLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

var monthNames = map[string]time.Month{
	"jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4,
	"may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9,
	"september": 9, "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}

var weekdayNames = map[string]bool{
	"mon": true, "monday": true, "tue": true, "tues": true, "tuesday": true, "wed": true, "wednesday": true,
	"thu": true, "thur": true, "thurs": true, "thursday": true, "fri": true, "friday": true,
	"sat": true, "saturday": true, "sun": true, "sunday": true,
}

// parseWords is a small version of a fuzzy date parser: it takes month
// names, day numbers (with ordinal suffixes), years, times with am/pm and
// zone abbreviations, and refuses any other word.
func parseWords(s string) (time.Time, bool) {
	var toks []string
	cur := []rune{}
	kind := 0 // 1 letters, 2 digits or time
	flush := func() {
		if len(cur) > 0 {
			toks = append(toks, string(cur))
			cur = cur[:0]
		}
		kind = 0
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			if kind != 1 {
				flush()
			}
			kind = 1
			cur = append(cur, r)
		case unicode.IsDigit(r) || (r == ':' && kind == 2) || (r == '.' && kind == 2):
			if kind != 2 {
				flush()
			}
			kind = 2
			cur = append(cur, r)
		case r == ' ' || r == ',' || r == '/' || r == '-':
			flush()
		default:
			return time.Time{}, false
		}
	}
	flush()
	year, day, hour, minute, sec := -1, -1, 0, 0, 0
	var month time.Month
	offset, hasZone, pm, am, hasTime := 0, false, false, false, false
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		lt := strings.ToLower(t)
		switch {
		case strings.Contains(t, ":"):
			parts := strings.Split(t, ":")
			if len(parts) > 3 || hasTime {
				return time.Time{}, false
			}
			vals := make([]int, 3)
			for k, part := range parts {
				v, err := strconv.Atoi(strings.Split(part, ".")[0])
				if err != nil {
					return time.Time{}, false
				}
				vals[k] = v
			}
			hour, minute, sec, hasTime = vals[0], vals[1], vals[2], true
		case unicode.IsDigit(rune(t[0])):
			v, err := strconv.Atoi(t)
			if err != nil {
				return time.Time{}, false
			}
			if i+1 < len(toks) {
				switch strings.ToLower(toks[i+1]) {
				case "st", "nd", "rd", "th":
					i++
					if day >= 0 {
						return time.Time{}, false
					}
					day = v
					continue
				case "am", "pm", "a", "p":
					if !hasTime {
						hour, hasTime = v, true
						continue
					}
				}
			}
			switch {
			case len(t) == 4 && year < 0:
				year = v
			case day < 0 && v >= 1 && v <= 31:
				day = v
			case year < 0:
				year = v
				if len(t) <= 2 {
					year += 2000
				}
			default:
				return time.Time{}, false
			}
		case lt == "am" || lt == "a":
			am = true
		case lt == "pm" || lt == "p":
			pm = true
		case monthNames[lt] != 0:
			if month != 0 {
				return time.Time{}, false
			}
			month = monthNames[lt]
		case weekdayNames[lt] || lt == "at" || lt == "of" || lt == "on":
		default:
			off, ok := commonTimezones[t]
			if !ok {
				off, ok = commonTimezones[strings.ToUpper(t)]
			}
			if !ok || hasZone {
				return time.Time{}, false
			}
			offset, hasZone = off, true
		}
	}
	if month == 0 || (year < 0 && day < 0) {
		return time.Time{}, false
	}
	now := time.Now().UTC()
	if year < 0 {
		year = now.Year()
	}
	if day < 0 {
		day = 1
	}
	if pm && hour < 12 {
		hour += 12
	}
	if am && hour == 12 {
		hour = 0
	}
	if hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, sec, 0, time.FixedZone("", offset))
	if t.Day() != day {
		return time.Time{}, false
	}
	return t, true
}
