package markdown

import (
	"strconv"
	"strings"

	"github.com/yuin/goldmark/text"
)

// User is what a mention needs to know of a user.
type User struct {
	ID       int64
	FullName string
	IsActive bool
}

// Group is what a group mention needs to know of a user group. Name is
// the name shown (for system groups, their display name).
type Group struct {
	ID          int64
	Name        string
	Deactivated bool
}

// Channel is what a channel link needs to know of a channel.
type Channel struct {
	ID   int64
	Name string
}

// Resolver looks up the users, groups and channels that mentions and
// channel links name. The caller (the service) implements it over its
// storage; a nil Resolver resolves nothing, so every mention stays text.
type Resolver interface {
	UserByName(fullName string) (User, bool)
	UserByID(id int64) (User, bool)
	GroupByName(name string) (Group, bool)
	ChannelByName(name string) (Channel, bool)
}

// TopicResolver is optionally implemented by a Resolver to give the oldest
// message of a topic, which a topic link carries as its "/with/" operand.
type TopicResolver interface {
	TopicOldestMessageID(channelID int64, topic string) (int64, bool)
}

// CustomEmojiResolver is optionally implemented by a Resolver to give the
// image URL of the realm's custom emoji of that name.
type CustomEmojiResolver interface {
	CustomEmojiURL(name string) (string, bool)
}

// Options tune message rendering.
type Options struct {
	// RealmURL is the organization's URL without a trailing slash (for
	// example "https://chat.example.com"); links to it followed by "/#"
	// or "/user_uploads/" become relative.
	RealmURL string
	// TranslateEmoticons turns ":)" and its kin into emoji (a user setting).
	TranslateEmoticons bool
	// RenderTeX renders a TeX expression to HTML (KaTeX). Without it, or
	// when it reports failure, TeX shows as the reference's tex-error span.
	RenderTeX func(tex string, display bool) (string, bool)
	// Linkifiers are the organization's linkifiers, in the order they
	// apply (CompileLinkifier).
	Linkifiers []*Linkifier
}

// Result is a rendered message and what the rendering found in it.
type Result struct {
	HTML string
	// MentionedUserIDs are the users mentioned non-silently, in order of
	// first mention.
	MentionedUserIDs []int64
	// MentionedGroupIDs are the groups mentioned non-silently.
	MentionedGroupIDs []int64
	// StreamWildcard is set by @**all**, @**everyone**, @**channel** or
	// @**stream**; TopicWildcard by @**topic** (both when not silent).
	StreamWildcard, TopicWildcard bool
	// HasLink, HasImage and HasAttachment are the message's "has:" facts:
	// a link, a link to an image, a link to an uploaded file.
	HasLink, HasImage, HasAttachment bool
	// UploadPaths are the path IDs ("<realm>/...") of the uploaded files
	// the message links, in order, without repeats.
	UploadPaths []string
	// IsMeMessage is set for a message that starts with "/me ".
	IsMeMessage bool
	// LinkedChannelIDs are the channels that channel links point to.
	LinkedChannelIDs []int64
}

// renderer holds the state of one rendering.
type renderer struct {
	res      Resolver
	opts     Options
	stashed  []string
	result   *Result
	users    map[int64]bool
	groups   map[int64]bool
	channels map[int64]bool
	// patterns are the inline patterns of this rendering (with the
	// linkifiers), set on first use.
	patterns []ipattern
	// listStarts are the start numbers of nested ordered lists, by the
	// line of their first item.
	listStarts map[int]int
}

// stash keeps a piece of finished HTML and returns its placeholder.
func (r *renderer) stash(html string) string {
	r.stashed = append(r.stashed, html)
	return placeholder(len(r.stashed) - 1)
}

// lonePlaceholder reports whether s is exactly one placeholder.
func lonePlaceholder(s string) (int, bool) {
	if len(s) < 3 || s[0] != phStart || s[len(s)-1] != phEnd {
		return 0, false
	}
	n, err := strconv.Atoi(s[1 : len(s)-1])
	if err != nil {
		return 0, false
	}
	return n, true
}

// expand replaces the placeholders in s by their HTML, repeatedly, as
// stashed HTML may itself hold placeholders.
func (r *renderer) expand(s string) string {
	for depth := 0; depth < 50 && strings.IndexByte(s, phStart) >= 0; depth++ {
		var b strings.Builder
		for {
			i := strings.IndexByte(s, phStart)
			if i < 0 {
				b.WriteString(s)
				break
			}
			j := strings.IndexByte(s[i:], phEnd)
			if j < 0 {
				b.WriteString(s)
				break
			}
			b.WriteString(s[:i])
			n, err := strconv.Atoi(s[i+1 : i+j])
			if err == nil && n >= 0 && n < len(r.stashed) {
				b.WriteString(r.stashed[n])
			}
			s = s[i+j+1:]
		}
		s = b.String()
	}
	return s
}

// RenderMessage renders a message's Markdown in the reference's dialect
// and reports what it found. Mentions and channel links are resolved with
// r, which may be nil. The error is reserved for failures of the caller's
// hooks; rendering itself always succeeds.
func RenderMessage(content string, r Resolver, opts Options) (Result, error) {
	res := Result{IsMeMessage: strings.HasPrefix(content, "/me ")}
	rd := &renderer{res: r, opts: opts, result: &res,
		users: map[int64]bool{}, groups: map[int64]bool{}, channels: map[int64]bool{}}
	res.HTML = rd.render(content)
	return res, nil
}

func (r *renderer) render(content string) string {
	if strings.TrimSpace(content) == "" {
		return ""
	}
	lines := strings.Split(content, "\n")
	lines = hangLists(lines)
	lines = strings.Split(normalize(strings.Join(lines, "\n")), "\n")
	f := &fencer{r: r}
	lines = f.run(lines)
	r.listStarts = map[int]int{}
	lines = reindentLists(lines, r.listStarts)
	src := []byte(strings.Join(lines, "\n") + "\n")
	doc := messageParser.Parse(text.NewReader(src))
	var b strings.Builder
	r.renderChildren(&b, doc, src, false)
	return strings.TrimRight(r.expand(b.String()), "\n")
}
