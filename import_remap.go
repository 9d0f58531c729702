package chat

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/teamchat/chat/storage"
)

// IDs inside the text of records, shifted with the records when an import
// cannot keep IDs: mentions and links in rendered HTML and in Markdown
// (user, group, channel and message IDs, the organization's ID in file
// and emoji paths), edit histories, draft and scheduled recipients,
// custom emoji reactions and statuses, file paths, direct conversations'
// member lists and user-valued profile fields.

// textRef is one pattern of an ID in text: the first group is the ID (or
// a comma-separated list of IDs) of the kind ("" for the organization).
type textRef struct {
	re   *regexp.Regexp
	kind string
}

var (
	htmlRefs = []textRef{
		{regexp.MustCompile(`data-user-id="(\d+)"`), "users"},
		{regexp.MustCompile(`data-user-group-id="(\d+)"`), "user_groups"},
		{regexp.MustCompile(`data-stream-id="(\d+)"`), "streams"},
		{regexp.MustCompile(`#narrow/(?:channel|stream)/(\d+)-`), "streams"},
		{regexp.MustCompile(`#narrow/dm/([\d,]+)-`), "users"},
		{regexp.MustCompile(`/(?:near|with)/(\d+)`), "messages"},
		{regexp.MustCompile(`/user_uploads/(\d+)/`), ""},
		{regexp.MustCompile(`/user_avatars/(\d+)/emoji/`), ""},
	}
	markdownRefs = []textRef{
		{regexp.MustCompile(`@_?\*\*[^*|]*\|(\d+)\*\*`), "users"},
		{regexp.MustCompile(`#narrow/(?:channel|stream)/(\d+)-`), "streams"},
		{regexp.MustCompile(`/(?:near|with)/(\d+)`), "messages"},
		{regexp.MustCompile(`/user_uploads/(\d+)/`), ""},
	}
)

// shiftID is an ID of the kind in the target ("" is the organization).
func (im *importer) shiftID(kind string, id int64) int64 {
	if kind == "" {
		if id == im.oldRealm {
			return im.realm.ID
		}
		return id
	}
	return id + im.base[kind]
}

// shiftText rewrites the IDs the patterns find.
func (im *importer) shiftText(s string, refs []textRef) string {
	for _, r := range refs {
		s = r.re.ReplaceAllStringFunc(s, func(match string) string {
			loc := r.re.FindStringSubmatchIndex(match)
			ids := strings.Split(match[loc[2]:loc[3]], ",")
			for i, x := range ids {
				id, err := strconv.ParseInt(x, 10, 64)
				if err != nil {
					return match
				}
				ids[i] = strconv.FormatInt(im.shiftID(r.kind, id), 10)
			}
			return match[:loc[2]] + strings.Join(ids, ",") + match[loc[3]:]
		})
	}
	return s
}

// shiftIDList rewrites a JSON list of IDs of the kind.
func (im *importer) shiftIDList(raw, kind string) (string, error) {
	if raw == "" {
		return raw, nil
	}
	var ids []int64
	if err := json.Unmarshal([]byte(raw), &ids); err != nil {
		return "", fmt.Errorf("want a JSON list of IDs, not %q", raw)
	}
	for i := range ids {
		ids[i] = im.shiftID(kind, ids[i])
	}
	out, err := json.Marshal(ids)
	return string(out), err
}

// remapText shifts the IDs inside a record's text.
func (im *importer) remapText(k *storage.Kind, rec any) error {
	var err error
	switch r := rec.(type) {
	case *storage.Message:
		r.Content = im.shiftText(r.Content, markdownRefs)
		r.RenderedContent = im.shiftText(r.RenderedContent, htmlRefs)
		r.EditHistory, err = im.shiftEditHistory(r.EditHistory)
	case *storage.ScheduledMessage:
		r.Content = im.shiftText(r.Content, markdownRefs)
		r.RenderedContent = im.shiftText(r.RenderedContent, htmlRefs)
		r.Recipients, err = im.shiftIDList(r.Recipients, "users")
	case *storage.Stream:
		r.Description = im.shiftText(r.Description, markdownRefs)
		r.RenderedDescription = im.shiftText(r.RenderedDescription, htmlRefs)
	case *storage.Draft:
		r.Content = im.shiftText(r.Content, markdownRefs)
		kind := "users"
		if r.Type == "stream" {
			kind = "streams"
		}
		r.To, err = im.shiftIDList(r.To, kind)
	case *storage.Reaction:
		r.EmojiCode, err = im.shiftEmojiCode(r.ReactionType, r.EmojiCode)
	case *storage.UserStatus:
		r.EmojiCode, err = im.shiftEmojiCode(r.ReactionType, r.EmojiCode)
	case *storage.Attachment:
		if rest, ok := strings.CutPrefix(r.PathID, strconv.FormatInt(im.oldRealm, 10)+"/"); ok {
			r.PathID = strconv.FormatInt(im.realm.ID, 10) + "/" + rest
		}
	case *storage.DirectConversation:
		r.MemberKey, err = im.shiftMemberKey(r.MemberKey)
	case *storage.ProfileFieldValue:
		if im.fieldTypes[r.FieldID] == FieldUser {
			r.Value, err = im.shiftIDList(r.Value, "users")
		}
		if r.RenderedValue != nil {
			v := im.shiftText(*r.RenderedValue, htmlRefs)
			r.RenderedValue = &v
		}
	}
	return err
}

func (im *importer) shiftEmojiCode(reactionType, code string) (string, error) {
	if reactionType != "realm_emoji" {
		return code, nil
	}
	id, err := strconv.ParseInt(code, 10, 64)
	if err != nil {
		return "", fmt.Errorf("custom emoji code %q is not an ID", code)
	}
	return strconv.FormatInt(im.shiftID("realm_emoji", id), 10), nil
}

func (im *importer) shiftMemberKey(key string) (string, error) {
	ids := strings.Split(key, ",")
	for i, x := range ids {
		id, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return "", fmt.Errorf("member_key %q is not a list of user IDs", key)
		}
		ids[i] = strconv.FormatInt(im.shiftID("users", id), 10)
	}
	return strings.Join(ids, ","), nil
}

func (im *importer) shiftEditHistory(raw string) (string, error) {
	if raw == "" {
		return raw, nil
	}
	entries, err := parseEditHistory(raw)
	if err != nil {
		return "", fmt.Errorf("edit_history: %v", err)
	}
	for i := range entries {
		e := &entries[i]
		for _, p := range []*int64{e.UserID, e.PrevStream, e.Stream} {
			if p != nil {
				kind := "streams"
				if p == e.UserID {
					kind = "users"
				}
				*p = im.shiftID(kind, *p)
			}
		}
		if e.PrevContent != nil {
			*e.PrevContent = im.shiftText(*e.PrevContent, markdownRefs)
		}
		if e.PrevRenderedContent != nil {
			*e.PrevRenderedContent = im.shiftText(*e.PrevRenderedContent, htmlRefs)
		}
	}
	out, err := json.Marshal(entries)
	return string(out), err
}
