package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/teamchat/chat/storage"
)

// Group-based permissions: the wire value, how updates are checked and
// stored, the descriptors that tie each setting to its record field and
// wire fields, and what one request knows about groups (groupScope).

// GroupSettingValue is who holds a group-based permission: a user group
// (GroupID), or a set of users and groups ({direct_members,
// direct_subgroups}). On the wire it is an integer or that object.
type GroupSettingValue struct {
	GroupID         *int64
	DirectMembers   []int64
	DirectSubgroups []int64
}

// MarshalJSON writes the integer or the object form.
func (v GroupSettingValue) MarshalJSON() ([]byte, error) {
	if v.GroupID != nil {
		return json.Marshal(*v.GroupID)
	}
	return json.Marshal(struct {
		DirectMembers   []int64 `json:"direct_members"`
		DirectSubgroups []int64 `json:"direct_subgroups"`
	}{nonNil(v.DirectMembers), nonNil(v.DirectSubgroups)})
}

// UnmarshalJSON reads the integer or the object form.
func (v *GroupSettingValue) UnmarshalJSON(b []byte) error {
	var id int64
	if err := json.Unmarshal(b, &id); err == nil {
		*v = GroupSettingValue{GroupID: &id}
		return nil
	}
	// Pointers, so that a null ID is seen (encoding/json would read it
	// as 0).
	var obj struct {
		DirectMembers   *[]*int64 `json:"direct_members"`
		DirectSubgroups *[]*int64 `json:"direct_subgroups"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	errInvalid := BadRequest("Invalid group setting value: it must be a user group ID or an object with direct_members and direct_subgroups")
	if err := dec.Decode(&obj); err != nil || obj.DirectMembers == nil || obj.DirectSubgroups == nil {
		return errInvalid
	}
	ids := func(ps []*int64) ([]int64, bool) {
		out := make([]int64, len(ps))
		for i, p := range ps {
			if p == nil {
				return nil, false
			}
			out[i] = *p
		}
		return out, true
	}
	members, ok1 := ids(*obj.DirectMembers)
	subgroups, ok2 := ids(*obj.DirectSubgroups)
	if !ok1 || !ok2 {
		return errInvalid
	}
	*v = GroupSettingValue{DirectMembers: members, DirectSubgroups: subgroups}
	return nil
}

// GroupSettingUpdate is how a permission is changed: the new value, and
// optionally the value the client believes is current (a mismatch is
// EXPECTATION_MISMATCH, so concurrent edits are not lost). New is required.
type GroupSettingUpdate struct {
	New *GroupSettingValue `json:"new"`
	Old *GroupSettingValue `json:"old,omitempty"`
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// maxGroupSettingIDs bounds the users or groups listed in one value.
const maxGroupSettingIDs = 1000

// storeGroupSetting turns a value into the ID of the group that holds the
// permission: a named group of the realm as it is, or a new anonymous group
// with the given direct members and subgroups. Every listed ID is checked
// with one set-based query.
func (s *Service) storeGroupSetting(ctx context.Context, st storage.Store, realmID int64, setting string, v GroupSettingValue) (int64, error) {
	if v.GroupID != nil {
		gs, err := st.GetGroupsByID(ctx, realmID, []int64{*v.GroupID})
		if err != nil {
			return 0, err
		}
		if len(gs) == 0 || gs[0].Name == "" || gs[0].Deactivated {
			return 0, noSuch("Invalid user group ID: %d", *v.GroupID)
		}
		return gs[0].ID, nil
	}
	members, subgroups := uniqueSorted(v.DirectMembers), uniqueSorted(v.DirectSubgroups)
	if len(members) > maxGroupSettingIDs || len(subgroups) > maxGroupSettingIDs {
		return 0, BadRequest("A group setting may name at most %d users and %d groups.", maxGroupSettingIDs, maxGroupSettingIDs)
	}
	users, err := st.FindUsers(ctx, realmID, storage.UserFilter{IDs: members})
	if err != nil {
		return 0, err
	}
	if missing, ok := firstMissing(members, users, func(u storage.User) int64 { return u.ID }); ok {
		return 0, noSuch("Invalid user ID: %d", missing)
	}
	groups, err := st.GetGroupsByID(ctx, realmID, subgroups)
	if err != nil {
		return 0, err
	}
	named := slices.DeleteFunc(groups, func(g storage.UserGroup) bool { return g.Name == "" })
	if missing, ok := firstMissing(subgroups, named, func(g storage.UserGroup) int64 { return g.ID }); ok {
		return 0, noSuch("Invalid user group ID: %d", missing)
	}
	now := s.nowUnix()
	g := &storage.UserGroup{RealmID: realmID, Description: "anonymous group for " + setting, DateCreated: &now}
	if err := st.CreateGroup(ctx, g); err != nil {
		return 0, err
	}
	if err := st.AddGroupMembers(ctx, realmID, g.ID, members); err != nil {
		return 0, err
	}
	if err := st.AddSubgroups(ctx, realmID, g.ID, subgroups); err != nil {
		return 0, err
	}
	return g.ID, nil
}

// uniqueSorted returns the IDs ascending, each once.
func uniqueSorted(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// firstMissing returns the first of want (ascending) that found lacks,
// and whether there is one (0 and negative IDs are looked up like any:
// no row has them, so they are missing).
func firstMissing[T any](want []int64, found []T, id func(T) int64) (int64, bool) {
	have := make(map[int64]bool, len(found))
	for _, f := range found {
		have[id(f)] = true
	}
	for _, w := range want {
		if !have[w] {
			return w, true
		}
	}
	return 0, false
}

// updateGroupSetting applies an update of the setting name: "new" is
// required; when the update names the value it expects to replace, that
// must match the current value (else EXPECTATION_MISMATCH); then store
// keeps the new value (collapsed, see collapse) and gives its group ID.
func (r reads) updateGroupSetting(ctx context.Context, realmID int64, name string, current GroupSettingValue, up *GroupSettingUpdate, store func(GroupSettingValue) (int64, error)) (int64, error) {
	if up.New == nil {
		return 0, BadRequest(`%s["new"] field is missing: Field required`, name)
	}
	if up.Old != nil {
		old, err := r.collapse(ctx, realmID, *up.Old)
		if err != nil {
			return 0, err
		}
		if !sameGroupSetting(current, old) {
			return 0, errExpectationMismatch
		}
	}
	v, err := r.collapse(ctx, realmID, *up.New)
	if err != nil {
		return 0, err
	}
	return store(v)
}

// collapse turns a value that names exactly one group and no users into
// that group, and an empty value into role:nobody, as the reference does
// with the values it is given (values it shows are never collapsed).
func (r reads) collapse(ctx context.Context, realmID int64, v GroupSettingValue) (GroupSettingValue, error) {
	if v.GroupID != nil || len(v.DirectMembers) > 0 || len(uniqueSorted(v.DirectSubgroups)) > 1 {
		return v, nil
	}
	if len(v.DirectSubgroups) == 1 {
		id := v.DirectSubgroups[0]
		return GroupSettingValue{GroupID: &id}, nil
	}
	nobody, err := r.systemGroupID(ctx, realmID, GroupNobody)
	if err != nil {
		return v, err
	}
	return GroupSettingValue{GroupID: &nobody}, nil
}

// sameGroupSetting compares two values as sets.
func sameGroupSetting(a, b GroupSettingValue) bool {
	if (a.GroupID == nil) != (b.GroupID == nil) {
		return false
	}
	if a.GroupID != nil {
		return *a.GroupID == *b.GroupID
	}
	return slices.Equal(uniqueSorted(a.DirectMembers), uniqueSorted(b.DirectMembers)) &&
		slices.Equal(uniqueSorted(a.DirectSubgroups), uniqueSorted(b.DirectSubgroups))
}

// groupScope is what one request knows about user groups: the groups the
// caller is in (directly or through subgroups), and the groups it loaded
// to show or check (their records and direct members and subgroups). It
// never holds more of the organization than the request's answer needs.
type groupScope struct {
	mine    map[int64]bool
	groups  map[int64]*storage.UserGroup
	members map[int64][]int64
	subs    map[int64][]int64
	filled  map[int64]bool // groups whose members and subs are loaded
}

func newGroupScope(mine []int64) *groupScope {
	g := &groupScope{mine: map[int64]bool{}, groups: map[int64]*storage.UserGroup{},
		members: map[int64][]int64{}, subs: map[int64][]int64{}, filled: map[int64]bool{}}
	for _, id := range mine {
		g.mine[id] = true
	}
	return g
}

// callerScope loads the groups the user is in.
func (r reads) callerScope(ctx context.Context, realmID, userID int64) (*groupScope, error) {
	mine, err := r.st.EffectiveGroupIDs(ctx, realmID, userID)
	if err != nil {
		return nil, err
	}
	return newGroupScope(mine), nil
}

// in reports whether the caller is in the group, directly or through
// nested subgroups.
func (g *groupScope) in(groupID int64) bool { return g.mine[groupID] }

// load fetches the records of the groups not loaded yet, and the direct
// members and subgroups of the anonymous ones among them (a setting's
// value shows those; a named group is shown by its ID alone).
func (g *groupScope) load(ctx context.Context, st storage.Store, realmID int64, ids ...int64) error {
	var todo []int64
	for _, id := range ids {
		if _, ok := g.groups[id]; !ok && id != 0 {
			todo = append(todo, id)
		}
	}
	todo = uniqueSorted(todo)
	if len(todo) == 0 {
		return nil
	}
	recs, err := st.GetGroupsByID(ctx, realmID, todo)
	if err != nil {
		return err
	}
	var anonymous []int64
	for i := range recs {
		g.groups[recs[i].ID] = &recs[i]
		if recs[i].Name == "" {
			anonymous = append(anonymous, recs[i].ID)
		}
	}
	return g.loadContents(ctx, st, realmID, anonymous...)
}

// loadContents fetches the direct members and subgroups of the groups
// whose contents are not loaded yet (two queries).
func (g *groupScope) loadContents(ctx context.Context, st storage.Store, realmID int64, ids ...int64) error {
	var todo []int64
	for _, id := range ids {
		if !g.filled[id] {
			todo = append(todo, id)
			g.filled[id] = true
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ms, err := st.ListGroupMembershipsOf(ctx, realmID, todo)
	if err != nil {
		return err
	}
	for _, m := range ms {
		g.members[m.GroupID] = append(g.members[m.GroupID], m.UserID)
	}
	es, err := st.ListGroupEdgesOf(ctx, realmID, todo)
	if err != nil {
		return err
	}
	for _, e := range es {
		g.subs[e.GroupID] = append(g.subs[e.GroupID], e.SubgroupID)
	}
	return nil
}

// named returns a loaded named group, or nil.
func (g *groupScope) named(id int64) *storage.UserGroup {
	if grp := g.groups[id]; grp != nil && grp.Name != "" {
		return grp
	}
	return nil
}

// value is the wire form of a setting held by (loaded) group id.
func (g *groupScope) value(id int64) GroupSettingValue {
	if g.named(id) != nil {
		return GroupSettingValue{GroupID: &id}
	}
	return GroupSettingValue{DirectMembers: uniqueSorted(nonNil(g.members[id])), DirectSubgroups: uniqueSorted(nonNil(g.subs[id]))}
}

// systemName is the name of a loaded system group, or "".
func (g *groupScope) systemName(id int64) string {
	if grp := g.named(id); grp != nil && grp.IsSystemGroup {
		return grp.Name
	}
	return ""
}

// settingDescriptor is one group-based permission setting of a record type
// R (storage.UserGroup, storage.Stream, storage.Realm): its wire name, the
// record field that holds the group ID (found by its column, name+"_id"),
// the default for new records ("" means the creator alone) and the system
// groups it may not be set to. Views, requests and updates find their
// fields by the wire name, so no list depends on another's order.
type settingDescriptor[R any] struct {
	name       string
	def        string
	disallowed []string
	field      func(*R) *int64
}

func newSetting[R any](name, def string, disallowed ...string) settingDescriptor[R] {
	return settingDescriptor[R]{name: name, def: def, disallowed: disallowed,
		field: fieldByTag[int64, R]("bun", name+"_id")}
}

// column is the database column of the setting.
func (d settingDescriptor[R]) column() string { return d.name + "_id" }

// checkAllowed refuses a named system group the setting may not hold.
func (d settingDescriptor[R]) checkAllowed(scope *groupScope, v GroupSettingValue) error {
	if v.GroupID != nil {
		if name := scope.systemName(*v.GroupID); name != "" && slices.Contains(d.disallowed, name) {
			return BadRequest("'%s' setting cannot be set to '%s' group.", d.name, name)
		}
	}
	return nil
}

// fieldByTag returns an accessor for the field of T whose struct tag key
// has name as its first element. A missing field is a programming error:
// it panics when the package initializes.
func fieldByTag[F any, T any](key, name string) func(*T) *F {
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get(key), ",")
		if tag != name {
			continue
		}
		if f.Type != reflect.TypeFor[F]() {
			panic(fmt.Sprintf("chat: %s.%s is %s, not %s", t.Name(), f.Name, f.Type, reflect.TypeFor[F]()))
		}
		idx := f.Index
		return func(p *T) *F { return reflect.ValueOf(p).Elem().FieldByIndex(idx).Addr().Interface().(*F) }
	}
	panic(fmt.Sprintf("chat: %s has no field tagged %s:%q", t.Name(), key, name))
}

// settingFields resolves, for each descriptor in order, the field of T
// named by the setting's wire name.
func settingFields[F any, T any, R any](sets []settingDescriptor[R]) []func(*T) *F {
	out := make([]func(*T) *F, len(sets))
	for i, d := range sets {
		out[i] = fieldByTag[F, T]("json", d.name)
	}
	return out
}
