package schemacheck

import (
	"encoding/json"
	"sort"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
)

// DocumentedError is one error answer the reference documents for an
// operation: an example of its error responses.
type DocumentedError struct {
	Method, Path string // the operation (Path is the yaml's template)
	Status       int
	Code, Msg    string
	// Body is the whole example.
	Body map[string]any
}

// DocumentedErrors lists the error examples of every operation, sorted by
// path, method, status and message: the examples of each non-2xx
// response, whether written on the media type or on the schemas it is
// made of (oneOf, anyOf, allOf, through references).
func DocumentedErrors() ([]DocumentedError, error) {
	doc, err := Spec()
	if err != nil {
		return nil, err
	}
	var out []DocumentedError
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, resp := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil || status < 300 || resp.Value == nil {
					continue
				}
				mt := resp.Value.Content.Get("application/json")
				if mt == nil {
					continue
				}
				for _, ex := range mediaExamples(mt) {
					b, _ := json.Marshal(ex)
					var body map[string]any
					if json.Unmarshal(b, &body) != nil {
						continue
					}
					c, _ := body["code"].(string)
					m, _ := body["msg"].(string)
					out = append(out, DocumentedError{Method: method, Path: path, Status: status, Code: c, Msg: m, Body: body})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Method != b.Method {
			return a.Method < b.Method
		}
		if a.Status != b.Status {
			return a.Status < b.Status
		}
		return a.Msg < b.Msg
	})
	return out, nil
}

func mediaExamples(mt *openapi3.MediaType) []any {
	var out []any
	if mt.Example != nil {
		out = append(out, mt.Example)
	}
	for _, e := range mt.Examples {
		if e != nil && e.Value != nil {
			out = append(out, e.Value.Value)
		}
	}
	var walk func(s *openapi3.SchemaRef, depth int)
	walk = func(s *openapi3.SchemaRef, depth int) {
		if s == nil || s.Value == nil || depth > 8 {
			return
		}
		if s.Value.Example != nil {
			out = append(out, s.Value.Example)
			return
		}
		for _, list := range []openapi3.SchemaRefs{s.Value.OneOf, s.Value.AnyOf, s.Value.AllOf} {
			for _, x := range list {
				walk(x, depth+1)
			}
		}
	}
	walk(mt.Schema, 0)
	return out
}
