package rest

import (
	"net/http"
	"reflect"
)

// fillHeaders copies request headers into the fields of *dst tagged
// `header:"Name"` (string fields), such as the User-Agent a Service
// method wants for its client name.
func fillHeaders(r *http.Request, dst any) {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	v = v.Elem()
	t := v.Type()
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("header")
		if name != "" && t.Field(i).Type.Kind() == reflect.String {
			v.Field(i).SetString(r.Header.Get(name))
		}
	}
}
