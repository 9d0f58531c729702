package rest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	chat "github.com/teamchat/chat"
)

// readParams merges the query string and the body of any method
// (urlencoded or multipart/form-data; DELETE and PATCH bodies included).
// Body values win over query values of the same name.
func readParams(r *http.Request) (url.Values, error) {
	values, _, err := readParamsAndBody(r)
	return values, err
}

// readParamsAndBody is readParams that also returns the body's own
// parameters (nil without a form body).
func readParamsAndBody(r *http.Request) (url.Values, url.Values, error) {
	values := r.URL.Query()
	if r.Body == nil || r.Body == http.NoBody {
		return values, nil, nil
	}
	ct := r.Header.Get("Content-Type")
	mediaType, mparams, _ := mime.ParseMediaType(ct)
	var body url.Values
	switch {
	case mediaType == "multipart/form-data":
		if mparams["boundary"] == "" {
			return nil, nil, chat.BadRequest("Malformed multipart body: no boundary")
		}
		br := bufio.NewReader(r.Body)
		if _, err := br.Peek(1); err == io.EOF { //nolint:errorlint // io.EOF is returned bare
			// An empty body (zulip-js sends one for calls without parameters).
			return values, nil, nil
		}
		mr := multipart.NewReader(br, mparams["boundary"])
		body = url.Values{}
		for {
			part, err := mr.NextPart()
			if err == io.EOF { //nolint:errorlint // a clean end is the bare io.EOF; a wrapped one means a truncated body
				break
			}
			if err != nil {
				return nil, nil, bodyError(err, "Malformed multipart body")
			}
			if part.FileName() != "" || part.FormName() == "" {
				// Files are not accepted by any endpoint yet; drain and skip.
				if _, err := io.Copy(io.Discard, part); err != nil {
					return nil, nil, bodyError(err, "Malformed multipart body")
				}
				continue
			}
			data, err := io.ReadAll(part)
			if err != nil {
				return nil, nil, bodyError(err, "Malformed multipart body")
			}
			body.Add(part.FormName(), string(data))
		}
	case mediaType == "application/x-www-form-urlencoded" || ct == "":
		data, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, nil, bodyError(err, "Malformed request body")
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return values, nil, nil
		}
		body, err = url.ParseQuery(string(data))
		if err != nil {
			return nil, nil, chat.BadRequest("Malformed request body")
		}
	default:
		// Other bodies (JSON, ...) carry no form parameters.
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return nil, nil, bodyError(err, "Malformed request body")
		}
		return values, nil, nil
	}
	for k, v := range body {
		values[k] = v
	}
	return values, body, nil
}

func bodyError(err error, msg string) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &chat.Error{Kind: chat.KindTooLarge, Code: chat.CodeBadRequest,
			Msg: fmt.Sprintf("Request body too large (limit: %d bytes)", tooLarge.Limit)}
	}
	return chat.BadRequest("%s", msg)
}

// field is how one request-struct field is read from the wire.
type field struct {
	name     string
	index    []int // path through embedded structs
	required bool  // non-pointer fields are required
	typ      reflect.Type
	// union is the reference's pydantic union of the parameter's type,
	// from the field's `union` tag: "list[str]|list[int]" makes errors
	// name the first branch as the reference does.
	union string
	// nullable: the JSON value null means "not given" (the reference's
	// Json[... | None] parameters), from the tag `null:"absent"`.
	nullable bool
}

var plans sync.Map // reflect.Type -> []field

// planFor lists the fields of a request struct by their json names; the
// fields of embedded structs count as the outer struct's own.
func planFor(t reflect.Type) []field {
	if p, ok := plans.Load(t); ok {
		return p.([]field)
	}
	fs := collectFields(t, nil)
	plans.Store(t, fs)
	return fs
}

func collectFields(t reflect.Type, prefix []int) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		index := append(slices.Clone(prefix), i)
		if sf.Anonymous && sf.Type.Kind() == reflect.Struct && sf.Tag.Get("json") == "" {
			fs = append(fs, collectFields(sf.Type, index)...)
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if !sf.IsExported() || name == "-" || name == "" {
			continue
		}
		fs = append(fs, field{name: name, index: index, required: sf.Type.Kind() != reflect.Pointer, typ: sf.Type,
			union: sf.Tag.Get("union"), nullable: sf.Tag.Get("null") == "absent"})
	}
	return fs
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// decode fills the struct dst points to from path parameters and request
// values, by the fields' json tags. Pointer fields are optional; the rest are
// required. It returns the names of values no field reads, sorted.
func decode(values url.Values, path map[string]string, dst any) ([]string, error) {
	v := reflect.ValueOf(dst).Elem()
	plan := planFor(v.Type())
	known := make(map[string]bool, len(plan)+len(path))
	for k := range path {
		known[k] = true
	}
	for _, f := range plan {
		known[f.name] = true
		raw, ok := path[f.name]
		if !ok {
			vs, present := values[f.name]
			if !present || len(vs) == 0 {
				if f.required {
					return nil, chat.MissingArgument(f.name)
				}
				continue
			}
			raw = vs[len(vs)-1]
		}
		if f.nullable && strings.TrimSpace(raw) == "null" {
			continue
		}
		if err := f.set(v.FieldByIndex(f.index), raw); err != nil {
			return nil, err
		}
	}
	var ignored []string
	for k := range values {
		if !known[k] {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	return ignored, nil
}

// set parses raw into the field's value target (allocating an optional
// field's value).
func (f field) set(target reflect.Value, raw string) error {
	if target.Kind() == reflect.Pointer {
		target.Set(reflect.New(f.typ.Elem()))
		target = target.Elem()
	}
	if f.union == "list[str]|list[int]" {
		if err := checkStrOrIntList(f.name, raw); err != nil {
			return err
		}
	}
	return setValue(target, f.name, raw)
}

// setValue parses raw into target: strings as they are, numbers and
// booleans as JSON scalars, everything else (lists, objects, types with
// their own JSON decoding) as JSON. Lists of numbers or strings also accept
// the comma-joined form some clients send in query strings.
func setValue(target reflect.Value, name, raw string) error {
	if reflect.PointerTo(target.Type()).Implements(jsonUnmarshaler) {
		return decodeJSON(target, name, raw)
	}
	switch target.Kind() {
	case reflect.String:
		target.SetString(raw)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, target.Type().Bits())
		if err != nil {
			return chat.InvalidArgument("%s is not an integer", name)
		}
		target.SetInt(n)
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(strings.TrimSpace(raw), target.Type().Bits())
		if err != nil {
			return chat.InvalidArgument("%s is not a float", name)
		}
		target.SetFloat(n)
	case reflect.Bool:
		switch strings.TrimSpace(raw) {
		case "true":
			target.SetBool(true)
		case "false":
			target.SetBool(false)
		default:
			return chat.InvalidArgument("%s is not a boolean", name)
		}
	case reflect.Slice:
		return decodeList(target, name, raw)
	default:
		return decodeJSON(target, name, raw)
	}
	return nil
}

// checkStrOrIntList applies the reference's errors for a parameter typed
// Json[list[str] | list[int]]: JSON that is not a list, and a list that
// is neither all strings nor all integers, are reported against the first
// branch (`principals["list[str]"] is not a list`,
// `principals["list[str]"][1] is not a string`). Other forms (invalid
// JSON, comma-joined values, a bare number) are left to the list decoder.
func checkStrOrIntList(name, raw string) error {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return nil
	}
	branch := name + `["list[str]"]`
	list, ok := v.([]any)
	if !ok {
		if _, isNumber := v.(json.Number); isNumber {
			// A bare ID is zulip-js's comma-joined form of a one-element
			// list (client-compat.md): the list decoder reads it.
			return nil
		}
		return chat.InvalidArgument("%s is not a list", branch)
	}
	allInts := true
	for _, item := range list {
		n, isNum := item.(json.Number)
		if _, err := n.Int64(); !isNum || err != nil {
			allInts = false
			break
		}
	}
	if allInts {
		return nil
	}
	for i, item := range list {
		if _, isStr := item.(string); !isStr {
			return chat.InvalidArgument("%s[%d] is not a string", branch, i)
		}
	}
	return nil
}

func decodeJSON(target reflect.Value, name, raw string) error {
	if !json.Valid([]byte(raw)) {
		return chat.InvalidArgument("%s is not valid JSON", name)
	}
	if err := json.Unmarshal([]byte(raw), target.Addr().Interface()); err != nil {
		var ce *chat.Error
		if errors.As(err, &ce) {
			return ce
		}
		switch target.Kind() {
		case reflect.Map, reflect.Struct:
			return chat.InvalidArgument("%s is not a dict", name)
		default:
			return chat.InvalidArgument("%s has invalid format", name)
		}
	}
	return nil
}

// decodeList is the one rule for list parameters. A JSON list's items are
// decoded strictly: a null item, or an item of another type (a nested
// list, a float or a string where integers are expected), is
// "{name}[i] is not an integer" (a string, a dict, ...), as the reference
// words it. Other JSON (null, a string, an object, a boolean, a float) is
// "{name} is not a list". zulip-js sends lists in PATCH/DELETE query
// strings comma-joined: a value that is not JSON (or one integer) is read
// that way, as long as each part is what the list holds (an integer for
// integer lists, anything for string lists, either for items with their
// own decoding, such as an ID or an email); otherwise it is
// "{name} is not valid JSON".
func decodeList(target reflect.Value, name, raw string) error {
	trimmed := strings.TrimSpace(raw)
	elem := target.Type().Elem()
	custom := reflect.PointerTo(elem).Implements(jsonUnmarshaler)
	var items []json.RawMessage
	_, notInt := strconv.ParseInt(trimmed, 10, 64)
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := json.Unmarshal([]byte(trimmed), &items); err != nil {
			return chat.InvalidArgument("%s is not valid JSON", name)
		}
	case json.Valid([]byte(trimmed)) && trimmed != "" && (notInt != nil || !isInt(elem.Kind()) && !custom):
		// JSON that is not a list. A string list still reads other
		// scalars as one comma-joined item (zulip-js), but never null.
		if elem.Kind() != reflect.String || trimmed == "null" || strings.HasPrefix(trimmed, `"`) || strings.HasPrefix(trimmed, "{") {
			return chat.InvalidArgument("%s is not a list", name)
		}
		fallthrough
	case elem.Kind() == reflect.String || isInt(elem.Kind()) || custom:
		for _, part := range strings.Split(trimmed, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			_, notInt := strconv.ParseInt(part, 10, 64)
			switch {
			case isInt(elem.Kind()) && notInt != nil:
				return chat.InvalidArgument("%s is not valid JSON", name)
			case elem.Kind() == reflect.String || notInt != nil:
				q, _ := json.Marshal(part)
				items = append(items, q)
			default:
				items = append(items, json.RawMessage(part))
			}
		}
	case json.Valid([]byte(trimmed)):
		return chat.InvalidArgument("%s is not a list", name)
	default:
		return chat.InvalidArgument("%s is not valid JSON", name)
	}
	want := kindName(elem.Kind())
	if custom {
		want = "valid" // an ID or an email, ...: its own decoding words its errors
	}
	out := reflect.MakeSlice(target.Type(), len(items), len(items))
	for i, item := range items {
		if string(item) == "null" {
			// encoding/json would leave a zero value (ID 0) in its place.
			return chat.InvalidArgument("%s[%d] is not %s", name, i, want)
		}
		if err := json.Unmarshal(item, out.Index(i).Addr().Interface()); err != nil {
			var ce *chat.Error
			if errors.As(err, &ce) {
				return ce
			}
			return chat.InvalidArgument("%s[%d] is not %s", name, i, want)
		}
	}
	target.Set(out)
	return nil
}

func isInt(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return true
	}
	return false
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a float"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a dict"
	}
	return "valid"
}
