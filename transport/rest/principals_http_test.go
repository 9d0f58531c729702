package rest_test

import (
	"net/url"
	"testing"

	chat "github.com/teamchat/chat"
)

// principals is Json[list[str] | list[int]] in the reference: its errors
// name the first branch of the union.
func TestPrincipalsErrorsHTTP(t *testing.T) {
	e := newEnv(t)
	alice := e.NewUser(t, chat.RoleMember)
	for _, c := range []struct{ principals, msg string }{
		{`{"a": 1}`, `principals["list[str]"] is not a list`},
		{`"someone@example.com"`, `principals["list[str]"] is not a list`},
		{`true`, `principals["list[str]"] is not a list`},
		{`[1, "a@example.com"]`, `principals["list[str]"][0] is not a string`},
		{`["a@example.com", 1]`, `principals["list[str]"][1] is not a string`},
		{`[1.5]`, `principals["list[str]"][0] is not a string`},
		{`[null]`, `principals["list[str]"][0] is not a string`},
		{`[1, 2`, `principals is not valid JSON`},
	} {
		for _, method := range []string{"POST", "DELETE"} {
			e.do(t, request{method: method, path: "/api/v1/users/me/subscriptions", user: &alice, params: url.Values{
				"subscriptions": {map[string]string{"POST": `[{"name": "general"}]`, "DELETE": `["general"]`}[method]},
				"principals":    {c.principals},
			}}).fails(t, 400, chat.CodeBadRequest, c.msg)
		}
	}
}
