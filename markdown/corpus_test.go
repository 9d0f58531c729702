package markdown

import (
	"encoding/json"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The reference's own Markdown test corpus (zerver/tests/fixtures/
// markdown_test_cases.json, copied to testdata). Every case is rendered
// with the fixtures of the reference's test database that the cases use;
// the cases listed in knownDifferences are expected not to match, for the
// reason given. The test fails when a case regresses, or when a listed
// case starts to match (remove it from the list then).

type corpusCase struct {
	Name               string `json:"name"`
	Input              string `json:"input"`
	ExpectedOutput     string `json:"expected_output"`
	TranslateEmoticons bool   `json:"translate_emoticons"`
	BackendOnly        bool   `json:"backend_only_rendering"`
}

type corpus struct {
	Regular []corpusCase `json:"regular_tests"`
	Linkify [][3]string  `json:"linkify_tests"`
}

// fixtureResolver holds the users, groups and channels of the
// reference's test database that the corpus names.
type fixtureResolver struct{}

var fixtureUsers = []User{
	{ID: 7, FullName: "Zoe", IsActive: true},
	{ID: 8, FullName: "Cordelia, Lear's daughter", IsActive: true},
	{ID: 10, FullName: "King Hamlet", IsActive: true},
	{ID: 11, FullName: "aaron", IsActive: true},
	{ID: 12, FullName: "Othello, the Moor of Venice", IsActive: true},
}

var fixtureGroups = []Group{{ID: 17, Name: "hamletcharacters"}, {ID: 18, Name: "support"}}

var fixtureChannels = []Channel{{ID: 1, Name: "Denmark"}, {ID: 3, Name: "Verona"}, {ID: 13, Name: "social"}}

func (fixtureResolver) UserByName(n string) (User, bool) {
	for _, u := range fixtureUsers {
		if strings.EqualFold(u.FullName, n) {
			return u, true
		}
	}
	return User{}, false
}

func (fixtureResolver) UserByID(id int64) (User, bool) {
	for _, u := range fixtureUsers {
		if u.ID == id {
			return u, true
		}
	}
	return User{}, false
}

func (fixtureResolver) GroupByName(n string) (Group, bool) {
	for _, g := range fixtureGroups {
		if g.Name == n {
			return g, true
		}
	}
	return Group{}, false
}

func (fixtureResolver) ChannelByName(n string) (Channel, bool) {
	for _, c := range fixtureChannels {
		if c.Name == n {
			return c, true
		}
	}
	return Channel{}, false
}

var testOptions = Options{RealmURL: "http://zulip.testserver"}

func loadCorpus(t testing.TB) corpus {
	b, err := os.ReadFile("testdata/markdown_test_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// linkifyExpected builds the expected HTML of a linkify case the way the
// reference's test does.
func linkifyExpected(payload, url string) string {
	if url == "" {
		return payload
	}
	href := url
	switch {
	case strings.HasPrefix(url, "http"):
	case strings.Contains(url, "@"):
		href = "mailto:" + url
	default:
		href = "http://" + url
	}
	return strings.Replace(payload, "%s", `<a href="`+href+`">`+url+`</a>`, 1)
}

func TestReferenceCorpus(t *testing.T) {
	c := loadCorpus(t)
	type outcome struct{ name, got, want string }
	var all []outcome
	for _, tc := range c.Regular {
		opts := testOptions
		opts.TranslateEmoticons = tc.TranslateEmoticons
		res, err := RenderMessage(tc.Input, fixtureResolver{}, opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.Name, err)
		}
		all = append(all, outcome{tc.Name, res.HTML, tc.ExpectedOutput})
	}
	for i, l := range c.Linkify {
		res, err := RenderMessage(l[0], fixtureResolver{}, testOptions)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, outcome{"linkify_" + strconv.Itoa(i) + " " + l[0], res.HTML, linkifyExpected(l[1], l[2])})
	}
	pass := 0
	var failing []string
	for _, o := range all {
		key := strings.SplitN(o.name, " ", 2)[0]
		_, known := knownDifferences[key]
		if o.got == o.want {
			pass++
			if known {
				t.Errorf("%s now matches: remove it from knownDifferences", key)
			}
			continue
		}
		failing = append(failing, key)
		if !known {
			t.Errorf("%s:\n input: %q\n  got: %q\n want: %q", o.name, inputOf(c, o.name), o.got, o.want)
		}
	}
	sort.Strings(failing)
	t.Logf("reference corpus: %d of %d cases match exactly", pass, len(all))
	if len(failing) > 0 {
		t.Logf("not matching: %s", strings.Join(failing, ", "))
	}
}

func inputOf(c corpus, name string) string {
	for _, tc := range c.Regular {
		if tc.Name == name {
			return tc.Input
		}
	}
	return ""
}
