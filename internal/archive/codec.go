package archive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/teamchat/chat/storage"
)

// A record is written as one JSON object whose keys are its columns' names
// (the record type's bun tags, so the schema's column names) and read back
// into the same type; a key the type does not have is refused.
//
// The JSON form is made by converting the record to a twin struct type
// built once per record type with reflect.StructOf: the same fields in the
// same order with json tags instead of bun tags. Go converts between
// struct types that differ only in tags, so encoding/json does the work.

var twins sync.Map // reflect.Type -> reflect.Type

func twinOf(t reflect.Type) reflect.Type {
	if tw, ok := twins.Load(t); ok {
		return tw.(reflect.Type)
	}
	fields := make([]reflect.StructField, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("bun"), ",")
		if name == "" {
			name = "-"
		}
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: reflect.StructTag(`json:"` + name + `"`)}
	}
	tw := reflect.StructOf(fields)
	twins.Store(t, tw)
	return tw
}

// MarshalRecord returns the JSON form of rec, a pointer to a record.
func MarshalRecord(rec any) ([]byte, error) {
	v := reflect.ValueOf(rec).Elem()
	return json.Marshal(v.Convert(twinOf(v.Type())).Interface())
}

// UnmarshalRecord reads one record of the kind from its JSON form.
func UnmarshalRecord(k *storage.Kind, line []byte) (any, error) {
	rec := k.New()
	v := reflect.ValueOf(rec).Elem()
	twin := reflect.New(twinOf(v.Type()))
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(twin.Interface()); err != nil {
		return nil, jsonProblem(err)
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value on the line")
	}
	v.Set(twin.Elem().Convert(v.Type()))
	return rec, nil
}

// jsonProblem words a decoding error for a person reading the archive.
func jsonProblem(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return fmt.Errorf("field %q: want a %s, not a JSON %s", typeErr.Field, typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("broken JSON at column %d: %v", syntaxErr.Offset, err)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return fmt.Errorf("%s (not a column of this kind)", strings.TrimPrefix(err.Error(), "json: "))
	}
	return fmt.Errorf("broken JSON: %v", err)
}
