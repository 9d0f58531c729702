package chat

import (
	"slices"
	"strconv"
)

// A reader with 50,000 unread messages in tens of thousands of topics
// makes unread_msgs the largest part of a registration's answer; through
// encoding/json's reflection, and its checking of a Marshaler's output
// once for the state and again for the envelope, its encoding took a
// fifth of the registration. appendJSON writes the same bytes as
// encoding/json (without HTML escaping, as the REST handler encodes);
// TestUnreadJSONMatchesEncodingJSON holds it to that.

// appendJSON appends the unread state as a JSON object.
func (u *UnreadMessages) appendJSON(b []byte) []byte {
	b = append(b, `{"count":`...)
	b = strconv.AppendInt(b, int64(u.Count), 10)
	b = append(b, `,"pms":`...)
	b = appendJSONList(b, u.PMs, func(b []byte, p *UnreadDirect) []byte {
		b = append(b, `{"other_user_id":`...)
		b = strconv.AppendInt(b, p.OtherUserID, 10)
		b = append(b, `,"sender_id":`...)
		b = strconv.AppendInt(b, p.SenderID, 10)
		b = append(b, `,"unread_message_ids":`...)
		b = appendJSONIDs(b, p.UnreadMessageIDs)
		return append(b, '}')
	})
	b = append(b, `,"streams":`...)
	b = appendJSONList(b, u.Streams, func(b []byte, t *UnreadChannelTopic) []byte {
		b = append(b, `{"stream_id":`...)
		b = strconv.AppendInt(b, t.StreamID, 10)
		b = append(b, `,"topic":`...)
		b = appendJSONString(b, t.Topic)
		b = append(b, `,"unread_message_ids":`...)
		b = appendJSONIDs(b, t.UnreadMessageIDs)
		return append(b, '}')
	})
	b = append(b, `,"huddles":`...)
	b = appendJSONList(b, u.Huddles, func(b []byte, h *UnreadGroupDirect) []byte {
		b = append(b, `{"user_ids_string":`...)
		b = appendJSONString(b, h.UserIDsString)
		b = append(b, `,"unread_message_ids":`...)
		b = appendJSONIDs(b, h.UnreadMessageIDs)
		return append(b, '}')
	})
	b = append(b, `,"mentions":`...)
	b = appendJSONIDs(b, u.Mentions)
	b = appendBoolField(b, `,"old_unreads_missing":`, u.OldUnreadsMissing)
	return append(b, '}')
}

// MarshalJSON writes the unread state without reflection.
func (u UnreadMessages) MarshalJSON() ([]byte, error) { return u.appendJSON(nil), nil }

// appendJSONList appends a list (null when nil) of items each written by
// one.
func appendJSONList[T any](b []byte, items []T, one func([]byte, *T) []byte) []byte {
	if items == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = one(b, &items[i])
	}
	return append(b, ']')
}

// appendJSONIDs appends a list of IDs (null when nil).
func appendJSONIDs(b []byte, ids []int64) []byte {
	if ids == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return append(b, ']')
}

// AppendJSON appends the registration's answer (see MarshalJSON) as
// encoding/json writes a map, keys sorted, without HTML escaping: the
// unread state without reflection, the rest through encoding/json. The
// REST handler writes it in place, without checking it again.
func (r RegisterResponse) AppendJSON(b []byte) ([]byte, error) {
	m := r.object()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch v := m[k].(type) {
		case *UnreadMessages:
			if v == nil {
				b = append(b, "null"...)
			} else {
				b = v.appendJSON(b)
			}
		default:
			var err error
			if b, err = appendJSONValue(b, v); err != nil {
				return nil, err
			}
		}
	}
	return append(b, '}'), nil
}
