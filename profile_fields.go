package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/teamchat/chat/markdown"
	"github.com/teamchat/chat/storage"
)

// Custom profile field types (the reference's numbering).
const (
	FieldShortText       = 1
	FieldLongText        = 2
	FieldSelect          = 3
	FieldDate            = 4
	FieldURL             = 5
	FieldUser            = 6
	FieldExternalAccount = 7
	FieldPronouns        = 8
)

// Profile field limits.
const (
	maxFieldNameLength  = 40
	maxFieldHintLength  = 80
	maxShortValueLength = 50
	maxLongValueLength  = 500
	maxSummaryFields    = 2
)

// ProfileField is a custom profile field definition.
type ProfileField struct {
	ID                      int64  `json:"id"`
	Type                    int    `json:"type"`
	Order                   int    `json:"order"`
	Name                    string `json:"name"`
	Hint                    string `json:"hint"`
	FieldData               string `json:"field_data"`
	DisplayInProfileSummary bool   `json:"display_in_profile_summary"`
	Required                bool   `json:"required"`
	EditableByUser          bool   `json:"editable_by_user"`
}

// GetProfileFieldsResponse is the success body of GetProfileFields.
type GetProfileFieldsResponse struct {
	CustomFields []ProfileField `json:"custom_fields"`
}

// GetProfileFields lists the organization's custom profile fields in order.
// Every user may read them.
func (s *Service) GetProfileFields(ctx context.Context, c Caller) (*GetProfileFieldsResponse, error) {
	return s.reads().getProfileFields(ctx, c)
}

// getProfileFields is GetProfileFields reading through r.
func (r reads) getProfileFields(ctx context.Context, c Caller) (*GetProfileFieldsResponse, error) {
	_, realm, err := r.actor(ctx, c)
	if err != nil {
		return nil, err
	}
	fields, err := r.realmProfileFields(ctx, realm.ID)
	if err != nil {
		return nil, r.s.internal(ctx, "get profile fields", err)
	}
	return &GetProfileFieldsResponse{CustomFields: fields}, nil
}

func profileFieldViews(rows []storage.ProfileField) []ProfileField {
	out := make([]ProfileField, 0, len(rows))
	for _, f := range rows {
		out = append(out, ProfileField{ID: f.ID, Type: f.FieldType, Order: f.Order,
			Name: f.Name, Hint: f.Hint, FieldData: f.FieldData, DisplayInProfileSummary: f.DisplayInProfileSummary,
			Required: f.Required, EditableByUser: f.EditableByUser})
	}
	return out
}

// realmProfileFields lists the organization's custom profile fields, as
// GET /realm/profile_fields and the event show them.
func (r reads) realmProfileFields(ctx context.Context, realmID int64) ([]ProfileField, error) {
	rows, err := r.st.ListProfileFields(ctx, realmID)
	if err != nil {
		return nil, err
	}
	return profileFieldViews(rows), nil
}

// emitProfileFields tells everyone the organization's new field list.
func emitProfileFields(ctx context.Context, w *writeTx, realmID int64) error {
	return emitWholeList(ctx, w, realmID, reads.realmProfileFields, func(l []ProfileField) EventBody { return CustomProfileFieldsEvent{Fields: l} })
}

// CreateProfileFieldRequest is the input of CreateProfileField.
type CreateProfileFieldRequest struct {
	Name      *string `json:"name"`
	Hint      *string `json:"hint"`
	FieldType int     `json:"field_type"`
	// FieldData: for a select field, {"key": {"text": ..., "order": ...}};
	// for an external account, {"subtype": ..., "url_pattern": ...}.
	FieldData               *map[string]any `json:"field_data"`
	DisplayInProfileSummary *bool           `json:"display_in_profile_summary"`
	Required                *bool           `json:"required"`
	EditableByUser          *bool           `json:"editable_by_user"`
}

// CreateProfileFieldResponse is the success body of CreateProfileField.
type CreateProfileFieldResponse struct {
	ID int64 `json:"id"`
}

// CreateProfileField adds a custom profile field. Administrators only.
func (s *Service) CreateProfileField(ctx context.Context, c Caller, req CreateProfileFieldRequest) (*CreateProfileFieldResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	f := storage.ProfileField{RealmID: realm.ID, FieldType: req.FieldType, EditableByUser: true}
	if req.FieldType < FieldShortText || req.FieldType > FieldPronouns {
		return nil, BadRequest("Invalid field type.")
	}
	if req.Name != nil {
		f.Name = strings.TrimSpace(*req.Name)
	}
	if req.Hint != nil {
		f.Hint = strings.TrimSpace(*req.Hint)
	}
	if req.FieldData != nil {
		data, err := checkFieldData(req.FieldType, *req.FieldData)
		if err != nil {
			return nil, err
		}
		f.FieldData = data
	} else if req.FieldType == FieldSelect || req.FieldType == FieldExternalAccount {
		return nil, MissingArgument("field_data")
	}
	if req.FieldType == FieldExternalAccount && f.Name == "" {
		var d struct{ Subtype string }
		_ = json.Unmarshal([]byte(f.FieldData), &d)
		f.Name = map[string]string{"github": "GitHub", "twitter": "Twitter"}[d.Subtype]
	}
	if f.Name == "" {
		return nil, BadRequest("Label cannot be blank.")
	}
	if utf8.RuneCountInString(f.Name) > maxFieldNameLength {
		return nil, BadRequest("name is too long (limit: %d characters)", maxFieldNameLength)
	}
	if utf8.RuneCountInString(f.Hint) > maxFieldHintLength {
		return nil, BadRequest("hint is too long (limit: %d characters)", maxFieldHintLength)
	}
	if req.Required != nil {
		f.Required = *req.Required
	}
	if req.EditableByUser != nil {
		f.EditableByUser = *req.EditableByUser
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		existing, err := w.ListProfileFields(ctx, realm.ID)
		if err != nil {
			return err
		}
		if req.DisplayInProfileSummary != nil && *req.DisplayInProfileSummary {
			if f.FieldType == FieldLongText || f.FieldType == FieldUser {
				return BadRequest("Field type not supported for display in profile summary.")
			}
			n := 0
			for _, e := range existing {
				if e.DisplayInProfileSummary {
					n++
				}
			}
			if n >= maxSummaryFields {
				return BadRequest("Only %d custom profile fields can be displayed in the profile summary.", maxSummaryFields)
			}
			f.DisplayInProfileSummary = true
		}
		for _, e := range existing {
			f.Order = max(f.Order, e.Order+1)
		}
		if err := w.CreateProfileField(ctx, &f); err != nil {
			return err
		}
		return emitProfileFields(ctx, w, realm.ID)
	})
	if errors.Is(err, storage.ErrConflict) {
		return nil, clash("A field with that label already exists.")
	}
	if err != nil {
		return nil, s.internal(ctx, "create profile field", err)
	}
	return &CreateProfileFieldResponse{ID: f.ID}, nil
}

// ReorderProfileFieldsRequest is the input of ReorderProfileFields: every
// field ID of the organization, in the new order.
type ReorderProfileFieldsRequest struct {
	Order []int64 `json:"order"`
}

// ReorderProfileFields sets the order of the custom profile fields.
// Administrators only.
func (s *Service) ReorderProfileFields(ctx context.Context, c Caller, req ReorderProfileFieldsRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		fields, err := w.ListProfileFields(ctx, realm.ID)
		if err != nil {
			return err
		}
		ids := make([]int64, len(fields))
		for i, f := range fields {
			ids[i] = f.ID
		}
		if len(req.Order) != len(ids) || !slices.Equal(uniqueSorted(req.Order), uniqueSorted(ids)) {
			return BadRequest("Invalid order mapping.")
		}
		for i := range fields {
			fields[i].Order = slices.Index(req.Order, fields[i].ID)
			if err := w.UpdateProfileField(ctx, &fields[i]); err != nil {
				return err
			}
		}
		return emitProfileFields(ctx, w, realm.ID)
	})
	if err != nil {
		return nil, s.internal(ctx, "reorder profile fields", err)
	}
	return &EmptyResponse{}, nil
}

// DeleteProfileFieldRequest is the input of DeleteProfileField.
type DeleteProfileFieldRequest struct {
	FieldID int64 `json:"field_id"`
}

// DeleteProfileField removes a field and every user's value of it.
// Administrators only.
func (s *Service) DeleteProfileField(ctx context.Context, c Caller, req DeleteProfileFieldRequest) (*EmptyResponse, error) {
	_, realm, err := s.reads().admin(ctx, c)
	if err != nil {
		return nil, err
	}
	err = s.write(ctx, realm.ID, func(w *writeTx) error {
		if err := w.DeleteProfileField(ctx, realm.ID, req.FieldID); err != nil {
			return err
		}
		return emitProfileFields(ctx, w, realm.ID)
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, noSuch("Field id %d not found.", req.FieldID)
	} else if err != nil {
		return nil, s.internal(ctx, "delete profile field", err)
	}
	return &EmptyResponse{}, nil
}

// checkFieldData validates type-specific field data and returns its JSON.
func checkFieldData(fieldType int, data map[string]any) (string, error) {
	switch fieldType {
	case FieldSelect:
		if len(data) == 0 {
			return "", BadRequest("Field must have at least one choice.")
		}
		texts := map[string]bool{}
		for key, v := range data {
			choice, ok := v.(map[string]any)
			text, okText := choice["text"].(string)
			order, okOrder := choice["order"].(string)
			if !ok || !okText || !okOrder || key == "" {
				return "", BadRequest("field_data is not a dict of choices with text and order")
			}
			if _, err := strconv.Atoi(order); err != nil {
				return "", BadRequest("field_data[\"%s\"][\"order\"] is not an integer", key)
			}
			if strings.TrimSpace(text) == "" {
				return "", BadRequest("Label cannot be blank.")
			}
			if texts[text] {
				return "", BadRequest("Field must not have duplicate choices.")
			}
			texts[text] = true
		}
	case FieldExternalAccount:
		subtype, _ := data["subtype"].(string)
		switch subtype {
		case "github", "twitter":
		case "custom":
			pattern, _ := data["url_pattern"].(string)
			if strings.Count(pattern, "%(username)s") != 1 {
				return "", BadRequest("Malformed URL pattern.")
			}
			if u, err := url.Parse(strings.Replace(pattern, "%(username)s", "x", 1)); err != nil || u.Host == "" {
				return "", BadRequest("Malformed URL pattern.")
			}
		default:
			return "", BadRequest("Invalid external account type")
		}
	default:
		if len(data) > 0 {
			return "", BadRequest("field_data is not supported for this field type")
		}
		return "", nil
	}
	b, err := json.Marshal(data)
	return string(b), err
}

// ProfileDataUpdate is one custom profile value to set: the field ID and the
// value (a string; for a user field, a JSON list of user IDs). An empty or
// null value removes the user's value.
type ProfileDataUpdate struct {
	ID    int64 `json:"id"`
	Value any   `json:"value"`
}

// checkProfileData validates values for a user and returns the values to
// store and the field IDs whose values to remove.
func (r reads) checkProfileData(ctx context.Context, realmID int64, target *storage.User, updates []ProfileDataUpdate) ([]storage.ProfileFieldValue, []int64, error) {
	fields, err := r.st.ListProfileFields(ctx, realmID)
	if err != nil {
		return nil, nil, err
	}
	byID := map[int64]storage.ProfileField{}
	for _, f := range fields {
		byID[f.ID] = f
	}
	var set []storage.ProfileFieldValue
	var remove []int64
	for _, up := range updates {
		f, ok := byID[up.ID]
		if !ok {
			return nil, nil, noSuch("Field id %d not found.", up.ID)
		}
		value, err := r.checkProfileValue(ctx, realmID, f, up.Value)
		if err != nil {
			return nil, nil, err
		}
		if value == "" {
			remove = append(remove, f.ID)
			continue
		}
		v := storage.ProfileFieldValue{RealmID: realmID, UserID: target.ID, FieldID: f.ID, Value: value}
		if f.FieldType == FieldShortText || f.FieldType == FieldLongText {
			html := markdown.Render(value)
			v.RenderedValue = &html
		}
		set = append(set, v)
	}
	return set, remove, nil
}

// checkProfileValue validates one value by its field's type and returns it
// as stored ("" means remove).
func (r reads) checkProfileValue(ctx context.Context, realmID int64, f storage.ProfileField, raw any) (string, error) {
	if raw == nil {
		return "", nil
	}
	if f.FieldType == FieldUser {
		ids, err := userIDList(raw)
		if err != nil {
			return "", BadRequest("%s is not a list of user IDs", f.Name)
		}
		if len(ids) == 0 {
			return "", nil
		}
		for _, id := range ids {
			u, err := r.st.GetUser(ctx, realmID, id)
			if errors.Is(err, storage.ErrNotFound) || err == nil && !u.IsActive {
				return "", noSuch("Invalid user ID: %d", id)
			} else if err != nil {
				return "", err
			}
		}
		b, _ := json.Marshal(ids)
		return string(b), nil
	}
	value, ok := raw.(string)
	if !ok {
		return "", BadRequest("%s is not a string", f.Name)
	}
	if value = strings.TrimSpace(value); value == "" {
		return "", nil
	}
	switch f.FieldType {
	case FieldShortText, FieldPronouns, FieldExternalAccount:
		if utf8.RuneCountInString(value) > maxShortValueLength {
			return "", BadRequest("%s is too long (limit: %d characters)", f.Name, maxShortValueLength)
		}
	case FieldLongText:
		if utf8.RuneCountInString(value) > maxLongValueLength {
			return "", BadRequest("%s is too long (limit: %d characters)", f.Name, maxLongValueLength)
		}
	case FieldSelect:
		var choices map[string]any
		_ = json.Unmarshal([]byte(f.FieldData), &choices)
		if _, ok := choices[value]; !ok {
			return "", BadRequest("'%s' is not a valid choice for '%s'.", value, f.Name)
		}
	case FieldDate:
		if _, err := time.Parse("2006-01-02", value); err != nil {
			return "", BadRequest("%s is not a date", f.Name)
		}
	case FieldURL:
		if !isHTTPURL(value) {
			return "", BadRequest("%s is not a URL", f.Name)
		}
	}
	return value, nil
}

// userIDList reads a user field's value: a list of IDs, or a JSON string of one.
func userIDList(raw any) ([]int64, error) {
	if s, ok := raw.(string); ok {
		var ids []int64
		err := json.Unmarshal([]byte(s), &ids)
		return ids, err
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var ids []int64
	err = json.Unmarshal(b, &ids)
	return ids, err
}

// profileData formats stored values for the users with the given IDs, keyed
// by user then field ID (as the wire keys them: a string).
func profileData(values []storage.ProfileFieldValue) map[int64]map[string]ProfileFieldValue {
	out := map[int64]map[string]ProfileFieldValue{}
	for _, v := range values {
		m := out[v.UserID]
		if m == nil {
			m = map[string]ProfileFieldValue{}
			out[v.UserID] = m
		}
		m[fmt.Sprint(v.FieldID)] = ProfileFieldValue{Value: v.Value, RenderedValue: v.RenderedValue}
	}
	return out
}

// isHTTPURL is the reference's URL check (check_url) for values users
// give: an absolute http or https URL with a host.
func isHTTPURL(value string) bool {
	u, err := url.Parse(value)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
