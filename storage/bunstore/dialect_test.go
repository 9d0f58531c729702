package bunstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValuesList(t *testing.T) {
	cases := []struct {
		typed bool
		n     int
		types []string
		want  string
	}{
		{false, 1, []string{"bigint"}, "(?)"},
		{false, 2, []string{"bigint", "text", "text"}, "(?, ?, ?), (?, ?, ?)"},
		{true, 2, []string{"bigint", "bigint", "bigint"}, "(?::bigint, ?::bigint, ?::bigint), (?::bigint, ?::bigint, ?::bigint)"},
		{true, 1, []string{"bigint", "text"}, "(?::bigint, ?::text)"},
		{true, 0, []string{"bigint"}, ""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, valuesList(c.typed, c.n, c.types...))
	}
	assert.Equal(t, "(?, ?), (?, ?)", sqliteOps.values(2, "bigint", "bigint"))
	assert.Equal(t, "(?::bigint, ?::bigint), (?::bigint, ?::bigint)", postgresOps.values(2, "bigint", "bigint"))

	list, args := indexDocs(true, []searchDoc{{id: 1, topic: "a", text: "b"}, {id: 2, topic: "c", text: "d"}})
	assert.Equal(t, "(?::bigint, ?::text, ?::text), (?::bigint, ?::text, ?::text)", list)
	assert.Equal(t, []any{int64(1), "a", "b", int64(2), "c", "d"}, args)
}
