package rest

import (
	"net/url"
	"sort"
	"strings"
)

// segment is one part of a route pattern: a literal, or a named parameter
// that matches any segment ({name}), only digits ({name:int}), or, last,
// the rest of the path ({name...}, one segment or more, joined by "/").
type segment struct {
	literal string
	param   string
	intOnly bool
	rest    bool
}

type pattern struct {
	text     string
	segments []segment
}

func parsePattern(p string) pattern {
	out := pattern{text: p}
	for _, s := range strings.Split(strings.Trim(p, "/"), "/") {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			name, kind, _ := strings.Cut(s[1:len(s)-1], ":")
			rest := strings.HasSuffix(name, "...")
			out.segments = append(out.segments, segment{param: strings.TrimSuffix(name, "..."), intOnly: kind == "int", rest: rest})
			continue
		}
		out.segments = append(out.segments, segment{literal: s})
	}
	return out
}

// rank orders patterns from most to least specific, segment by segment:
// a literal beats an integer parameter, which beats a free parameter.
func (p pattern) rank(i int) int {
	if i >= len(p.segments) {
		return -1
	}
	switch s := p.segments[i]; {
	case s.param == "":
		return 2
	case s.intOnly:
		return 1
	default:
		return 0
	}
}

// match returns the path parameters if the segments match the pattern.
func (p pattern) match(segs []string) (map[string]string, bool) {
	if n := len(p.segments); n > 0 && p.segments[n-1].rest && len(segs) > n {
		segs = append(segs[:n-1:n-1], strings.Join(segs[n-1:], "/"))
	}
	if len(segs) != len(p.segments) {
		return nil, false
	}
	var params map[string]string
	for i, s := range p.segments {
		v := segs[i]
		switch {
		case s.param == "":
			if v != s.literal {
				return nil, false
			}
		default:
			if v == "" || s.intOnly && strings.Trim(v, "0123456789") != "" {
				return nil, false
			}
			if params == nil {
				params = make(map[string]string, 2)
			}
			params[s.param] = v
		}
	}
	return params, true
}

// resource is one path pattern with the endpoints of each method.
type resource struct {
	pattern pattern
	// route is the pattern below the handler's root (http.route).
	route   string
	methods map[string]*endpoint
	allowed []string
}

type router struct{ resources []*resource }

func newRouter(eps []endpoint) *router {
	byText := map[string]*resource{}
	var rs []*resource
	for i := range eps {
		ep := &eps[i]
		r := byText[ep.pattern]
		if r == nil {
			r = &resource{pattern: parsePattern(ep.pattern), route: apiPrefix + ep.pattern, methods: map[string]*endpoint{}}
			byText[ep.pattern] = r
			rs = append(rs, r)
		}
		if _, dup := r.methods[ep.method]; dup {
			panic("rest: duplicate route " + ep.method + " " + ep.pattern)
		}
		r.methods[ep.method] = ep
	}
	for _, r := range rs {
		for m := range r.methods {
			r.allowed = append(r.allowed, m)
		}
		if _, ok := r.methods["GET"]; ok {
			r.allowed = append(r.allowed, "HEAD")
		}
		sort.Strings(r.allowed)
	}
	sort.SliceStable(rs, func(a, b int) bool {
		pa, pb := rs[a].pattern, rs[b].pattern
		for i := 0; i < len(pa.segments) || i < len(pb.segments); i++ {
			if ra, rb := pa.rank(i), pb.rank(i); ra != rb {
				return ra > rb
			}
		}
		return false
	})
	return &router{resources: rs}
}

// find returns the most specific resource matching the escaped path (below
// /api/v1) and its unescaped parameters.
func (rt *router) find(escapedPath string) (*resource, map[string]string) {
	raw := strings.Split(strings.Trim(escapedPath, "/"), "/")
	segs := make([]string, len(raw))
	for i, s := range raw {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, nil
		}
		segs[i] = u
	}
	for _, r := range rt.resources {
		if params, ok := r.pattern.match(segs); ok {
			return r, params
		}
	}
	return nil, nil
}
