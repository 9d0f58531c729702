package rest

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chat "github.com/teamchat/chat"
)

func TestReadParams(t *testing.T) {
	mp := func(fields map[string]string, withFile bool) (string, string) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for k, v := range fields {
			require.NoError(t, w.WriteField(k, v))
		}
		if withFile {
			f, err := w.CreateFormFile("upload", "a.txt")
			require.NoError(t, err)
			_, _ = f.Write([]byte("file body"))
		}
		require.NoError(t, w.Close())
		return buf.String(), "multipart/form-data; boundary=" + w.Boundary()
	}
	mpBody, mpType := mp(map[string]string{"b": "2", "list": "[1,2]"}, true)
	cases := []struct {
		name, method, target, contentType, body string
		want                                    url.Values
	}{
		{"query only", "GET", "/x?a=1&b=2", "", "", url.Values{"a": {"1"}, "b": {"2"}}},
		{"urlencoded POST", "POST", "/x", "application/x-www-form-urlencoded", "a=1&b=%C3%A9", url.Values{"a": {"1"}, "b": {"é"}}},
		{"urlencoded with charset", "PATCH", "/x", "application/x-www-form-urlencoded; charset=UTF-8", "a=1", url.Values{"a": {"1"}}},
		{"DELETE body is read", "DELETE", "/x", "application/x-www-form-urlencoded", "subscriptions=%5B%22a%22%5D", url.Values{"subscriptions": {`["a"]`}}},
		{"body wins over query", "POST", "/x?a=query&c=3", "application/x-www-form-urlencoded", "a=body", url.Values{"a": {"body"}, "c": {"3"}}},
		{"no content type means urlencoded", "POST", "/x", "", "a=1", url.Values{"a": {"1"}}},
		{"multipart, files skipped", "POST", "/x?a=1", mpType, mpBody, url.Values{"a": {"1"}, "b": {"2"}, "list": {"[1,2]"}}},
		{"JSON body carries no parameters", "POST", "/x?a=1", "application/json", `{"b":2}`, url.Values{"a": {"1"}}},
		{"empty body", "POST", "/x", "application/x-www-form-urlencoded", "", url.Values{}},
		{"empty multipart body", "POST", "/x?a=1", "multipart/form-data; boundary=zz", "", url.Values{"a": {"1"}}},
		{"multipart with only the closing delimiter", "POST", "/x", "multipart/form-data;boundary=zz", "--zz--\r\n", url.Values{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.target, nil)
			// A real body even when empty (a network request's body is never http.NoBody).
			r.Body = io.NopCloser(strings.NewReader(c.body))
			if c.contentType != "" {
				r.Header.Set("Content-Type", c.contentType)
			}
			got, err := readParams(r)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
	t.Run("malformed", func(t *testing.T) {
		for _, c := range []struct{ ct, body string }{
			{"multipart/form-data", "x"},
			{"multipart/form-data; boundary=zz", "not multipart at all"},
			{"application/x-www-form-urlencoded", "a=%zz"},
		} {
			r := httptest.NewRequest("POST", "/x", strings.NewReader(c.body))
			r.Header.Set("Content-Type", c.ct)
			_, err := readParams(r)
			e := chat.AsError(err)
			require.NotNil(t, e, c.ct)
			assert.Equal(t, chat.KindInvalid, e.Kind, c.ct)
		}
	})
	t.Run("too large", func(t *testing.T) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/x", strings.NewReader("a="+strings.Repeat("x", 100)))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		_, err := readParams(r)
		assert.Equal(t, chat.KindTooLarge, chat.AsError(err).Kind)
	})
}

type groupSetting struct {
	ID      *int64
	Members []int64
}

func (g *groupSetting) UnmarshalJSON(b []byte) error {
	var id int64
	if err := json.Unmarshal(b, &id); err == nil {
		g.ID = &id
		return nil
	}
	var obj struct {
		DirectMembers []int64 `json:"direct_members"`
	}
	if err := json.Unmarshal(b, &obj); err != nil || obj.DirectMembers == nil {
		return chat.BadRequest("Invalid group setting value")
	}
	g.Members = obj.DirectMembers
	return nil
}

// idOrName decodes a JSON integer or string, like chat.Principal.
type idOrName struct {
	ID   int64
	Name string
}

func (v *idOrName) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &v.ID); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &v.Name); err == nil {
		return nil
	}
	return chat.BadRequest("not an ID or a name")
}

type decodeTarget struct {
	ID       int64             `json:"id"`
	Name     string            `json:"name"`
	Flag     *bool             `json:"flag"`
	Count    *int              `json:"count"`
	Ratio    *float64          `json:"ratio"`
	IDs      *[]int64          `json:"ids"`
	Names    *[]string         `json:"names"`
	Data     *map[string]any   `json:"data"`
	Setting  *groupSetting     `json:"setting"`
	Items    *[]map[string]any `json:"items"`
	Refs     *[]idOrName       `json:"refs"`
	Internal string            `json:"-"`
	//lint:ignore U1000 present to check that unexported fields are never decoded
	hidden string
}

func TestDecode(t *testing.T) {
	base := func() url.Values { return url.Values{"id": {"7"}, "name": {"n"}} }
	with := func(k, v string) url.Values {
		vs := base()
		vs.Set(k, v)
		return vs
	}
	t.Run("all kinds", func(t *testing.T) {
		vs := base()
		vs.Set("flag", "true")
		vs.Set("count", " 12 ")
		vs.Set("ratio", "1.5")
		vs.Set("ids", "[1, 2, 3]")
		vs.Set("names", `["a","b"]`)
		vs.Set("data", `{"k":1}`)
		vs.Set("setting", "5")
		vs.Set("items", `[{"a":1}]`)
		vs.Set("unknown", "x")
		vs.Set("another", "y")
		var got decodeTarget
		ignored, err := decode(vs, nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []string{"another", "unknown"}, ignored)
		assert.Equal(t, int64(7), got.ID)
		assert.Equal(t, "n", got.Name)
		assert.Equal(t, true, *got.Flag)
		assert.Equal(t, 12, *got.Count)
		assert.Equal(t, 1.5, *got.Ratio)
		assert.Equal(t, []int64{1, 2, 3}, *got.IDs)
		assert.Equal(t, []string{"a", "b"}, *got.Names)
		assert.Equal(t, map[string]any{"k": float64(1)}, *got.Data)
		assert.Equal(t, int64(5), *got.Setting.ID)
		assert.Len(t, *got.Items, 1)
	})
	t.Run("optional fields stay nil", func(t *testing.T) {
		var got decodeTarget
		ignored, err := decode(base(), nil, &got)
		require.NoError(t, err)
		assert.Empty(t, ignored)
		assert.Nil(t, got.Flag)
		assert.Nil(t, got.IDs)
		assert.Nil(t, got.Setting)
	})
	t.Run("path parameters win and are known", func(t *testing.T) {
		var got decodeTarget
		ignored, err := decode(url.Values{"id": {"1"}, "name": {"n"}}, map[string]string{"id": "42"}, &got)
		require.NoError(t, err)
		assert.Empty(t, ignored)
		assert.Equal(t, int64(42), got.ID)
	})
	t.Run("comma-joined lists", func(t *testing.T) {
		var got decodeTarget
		_, err := decode(with("ids", "1,2, 3"), nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []int64{1, 2, 3}, *got.IDs)
		_, err = decode(with("names", "a@x.com,b@y.com"), nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []string{"a@x.com", "b@y.com"}, *got.Names)
		_, err = decode(with("ids", "5"), nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []int64{5}, *got.IDs)
		_, err = decode(with("ids", ""), nil, &got)
		require.NoError(t, err)
		assert.Empty(t, *got.IDs)
		_, err = decode(with("refs", "7, a@b.com,12"), nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []idOrName{{ID: 7}, {Name: "a@b.com"}, {ID: 12}}, *got.Refs, "IDs and emails, as zulip-js sends principals")
		_, err = decode(with("refs", `[7, "a@b.com"]`), nil, &got)
		require.NoError(t, err)
		assert.Equal(t, []idOrName{{ID: 7}, {Name: "a@b.com"}}, *got.Refs)
	})
	t.Run("the last of repeated values counts", func(t *testing.T) {
		var got decodeTarget
		_, err := decode(url.Values{"id": {"1", "2"}, "name": {"n"}}, nil, &got)
		require.NoError(t, err)
		assert.Equal(t, int64(2), got.ID)
	})
	errs := []struct {
		name   string
		values url.Values
		code   string
		msg    string
	}{
		{"missing", url.Values{"name": {"n"}}, chat.CodeRequestVariableMissing, "Missing 'id' argument"},
		{"missing string", url.Values{"id": {"1"}}, chat.CodeRequestVariableMissing, "Missing 'name' argument"},
		{"not an integer", with("id", "x"), chat.CodeBadRequest, "id is not an integer"},
		{"integer overflow", with("id", "99999999999999999999"), chat.CodeBadRequest, "id is not an integer"},
		{"int overflow of int", with("count", "99999999999999999999"), chat.CodeBadRequest, "count is not an integer"},
		{"not a boolean", with("flag", "yes"), chat.CodeBadRequest, "flag is not a boolean"},
		{"boolean case", with("flag", "True"), chat.CodeBadRequest, "flag is not a boolean"},
		{"not a float", with("ratio", "x"), chat.CodeBadRequest, "ratio is not a float"},
		{"list not JSON", with("ids", "[1,"), chat.CodeBadRequest, "ids is not valid JSON"},
		{"list element", with("ids", `[1,"a"]`), chat.CodeBadRequest, "ids[1] is not an integer"},
		{"comma element", with("ids", "1,a"), chat.CodeBadRequest, "ids is not valid JSON"},
		{"one word", with("ids", "abc"), chat.CodeBadRequest, "ids is not valid JSON"},
		// The reference's wording for what is not a list of IDs (issue 22):
		// encoding/json would read null as ID 0.
		{"null", with("ids", "null"), chat.CodeBadRequest, "ids is not a list"},
		{"null item", with("ids", "[null]"), chat.CodeBadRequest, "ids[0] is not an integer"},
		{"null later", with("ids", "[1, null]"), chat.CodeBadRequest, "ids[1] is not an integer"},
		{"nested list", with("ids", "[[1]]"), chat.CodeBadRequest, "ids[0] is not an integer"},
		{"float item", with("ids", "[1.5]"), chat.CodeBadRequest, "ids[0] is not an integer"},
		{"integral float item", with("ids", "[2.0]"), chat.CodeBadRequest, "ids[0] is not an integer"},
		{"string item", with("ids", `["1"]`), chat.CodeBadRequest, "ids[0] is not an integer"},
		{"bare float", with("ids", "1.5"), chat.CodeBadRequest, "ids is not a list"},
		{"bare boolean", with("ids", "true"), chat.CodeBadRequest, "ids is not a list"},
		{"bare string", with("ids", `"1"`), chat.CodeBadRequest, "ids is not a list"},
		{"object", with("ids", `{"a": 1}`), chat.CodeBadRequest, "ids is not a list"},
		{"string list null", with("names", "null"), chat.CodeBadRequest, "names is not a list"},
		{"string list null item", with("names", `["a", null]`), chat.CodeBadRequest, "names[1] is not a string"},
		{"dict list null item", with("items", `[null]`), chat.CodeBadRequest, "items[0] is not a dict"},
		{"refs null", with("refs", "null"), chat.CodeBadRequest, "refs is not a list"},
		{"refs null item", with("refs", "[null]"), chat.CodeBadRequest, "refs[0] is not valid"},
		{"string list element", with("names", `["a",2]`), chat.CodeBadRequest, "names[1] is not a string"},
		{"object list not a list", with("items", `{"a":1}`), chat.CodeBadRequest, "items is not a list"},
		{"object list garbage", with("items", `{a`), chat.CodeBadRequest, "items is not valid JSON"},
		{"dict not JSON", with("data", "{"), chat.CodeBadRequest, "data is not valid JSON"},
		{"dict is a list", with("data", "[1]"), chat.CodeBadRequest, "data is not a dict"},
		{"custom type error passes through", with("setting", `{"x":1}`), chat.CodeBadRequest, "Invalid group setting value"},
		{"custom type not JSON", with("setting", `{`), chat.CodeBadRequest, "setting is not valid JSON"},
	}
	for _, c := range errs {
		t.Run(c.name, func(t *testing.T) {
			var got decodeTarget
			_, err := decode(c.values, nil, &got)
			e := chat.AsError(err)
			require.NotNil(t, e)
			assert.Equal(t, c.code, e.Code)
			assert.Equal(t, c.msg, e.Msg)
			assert.Equal(t, chat.KindInvalid, e.Kind)
			if c.code == chat.CodeRequestVariableMissing {
				assert.NotEmpty(t, e.Fields["var_name"])
			}
		})
	}
}

// FuzzDecode feeds arbitrary values to every field kind: decoding must never
// panic, and any failure must be an Invalid *chat.Error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"1", "[1,2]", `{"a":1}`, "true", "", "1,2", `["a"]`, `{"direct_members":[1]}`, "\x00", "[[[", "-0", "1e400",
		"null", "[null]", "[[1]]", "[1.5]", "1.5", `["1"]`, "abc", `{"direct_members":[null],"direct_subgroups":[]}`} {
		f.Add("ids", s)
		f.Add("setting", s)
	}
	for _, s := range []string{"7,a@b.com", "a,,b", `[7,"x"]`, `{"new": 1, "old": 2}`} {
		f.Add("refs", s)
	}
	names := []string{"id", "name", "flag", "count", "ratio", "ids", "names", "data", "setting", "items", "refs", "other"}
	f.Fuzz(func(t *testing.T, key, value string) {
		for _, name := range append(names, key) {
			vs := url.Values{"id": {"1"}, "name": {"n"}}
			vs.Set(name, value)
			var got decodeTarget
			_, err := decode(vs, nil, &got)
			if err != nil {
				e := chat.AsError(err)
				if e.Kind != chat.KindInvalid {
					t.Fatalf("%s=%q: error of kind %v: %v", name, value, e.Kind, err)
				}
			}
		}
	})
}

func TestRouter(t *testing.T) {
	noop := endpoint{}
	mk := func(method, pattern string) endpoint {
		e := noop
		e.method, e.pattern = method, pattern
		return e
	}
	rt := newRouter([]endpoint{
		mk("GET", "/users/{email}"),
		mk("PATCH", "/users/{email}"),
		mk("GET", "/users/{user_id:int}"),
		mk("GET", "/users/me"),
		mk("DELETE", "/users/me"),
		mk("GET", "/users"),
		mk("POST", "/users"),
	})
	cases := []struct {
		path, pattern string
		params        map[string]string
	}{
		{"/users", "/users", nil},
		{"/users/", "/users", nil},
		{"/users/me", "/users/me", nil},
		{"/users/12", "/users/{user_id:int}", map[string]string{"user_id": "12"}},
		{"/users/a%40b.com", "/users/{email}", map[string]string{"email": "a@b.com"}},
		{"/users/a@b.com", "/users/{email}", map[string]string{"email": "a@b.com"}},
		{"/users/12x", "/users/{email}", map[string]string{"email": "12x"}},
	}
	for _, c := range cases {
		res, params := rt.find(c.path)
		require.NotNil(t, res, c.path)
		assert.Equal(t, c.pattern, res.pattern.text, c.path)
		assert.Equal(t, c.params, params, c.path)
	}
	for _, miss := range []string{"/nothing", "/users/1/2", "/users/%zz"} {
		res, _ := rt.find(miss)
		assert.Nil(t, res, miss)
	}
	res, _ := rt.find("/users/me")
	assert.Equal(t, []string{"DELETE", "GET", "HEAD"}, res.allowed)
	assert.Panics(t, func() { newRouter([]endpoint{mk("GET", "/a"), mk("GET", "/a")}) })
}

func TestCollapseSlashes(t *testing.T) {
	for in, want := range map[string]string{
		"/api/v1/users": "/api/v1/users", "//api/v1/users": "/api/v1/users",
		"///api//v1///users/": "/api/v1/users/", "/": "/",
	} {
		assert.Equal(t, want, collapseSlashes(in), in)
	}
}

// Every list parameter of every route follows the one rule (issue 22):
// null, a null item, a nested list, a float or a string where the list
// holds other things are refused with the reference's wording, never read
// as a zero value.
func TestEveryListParameterRefusesNullAndWrongItems(t *testing.T) {
	checked := 0
	for _, ep := range routes() {
		if ep.req == nil {
			continue
		}
		for _, f := range planFor(ep.req) {
			typ := f.typ
			if typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			if typ.Kind() != reflect.Slice {
				continue
			}
			checked++
			prefix := f.name
			if f.union != "" {
				prefix += `["list[str]"]`
			}
			bad := map[string]string{
				"[null]":     prefix + "[0] is not ",
				"[1, null]":  prefix + "[0] is not ", // [1] for integer lists, below
				"[[1]]":      prefix + "[0] is not ",
				"[1.5]":      prefix + "[0] is not ",
				`{"a": [1]}`: prefix + " is not a list",
				`"[1]"`:      prefix + " is not a list",
			}
			if !f.nullable {
				bad["null"] = prefix + " is not a list"
			}
			elem := typ.Elem()
			if (elem.Kind() == reflect.String || elem.Kind() == reflect.Struct || elem.Kind() == reflect.Map) && f.union == "" {
				bad["[1]"] = prefix + "[0] is not "
			} else if f.union == "" {
				bad["[{}]"] = prefix + "[0] is not "
			}
			if isInt(elem.Kind()) {
				bad["[1, null]"] = prefix + "[1] is not an integer"
				bad[`["1"]`] = prefix + "[0] is not an integer"
				bad["[true]"] = prefix + "[0] is not an integer"
				bad["1.5"] = prefix + " is not a list"
			}
			for raw, want := range bad {
				target := reflect.New(f.typ).Elem()
				err := f.set(target, raw)
				require.Error(t, err, "%s %s %s=%s", ep.method, ep.pattern, f.name, raw)
				e := chat.AsError(err)
				assert.Equal(t, chat.CodeBadRequest, e.Code, "%s %s %s=%s", ep.method, ep.pattern, f.name, raw)
				assert.True(t, strings.HasPrefix(e.Msg, want), "%s %s %s=%s: %q does not start with %q", ep.method, ep.pattern, f.name, raw, e.Msg, want)
			}
		}
	}
	assert.Greater(t, checked, 25, "list parameters found among the routes")
}
