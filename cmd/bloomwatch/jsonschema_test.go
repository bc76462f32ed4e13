package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/experiments"
	"github.com/bloomwatch/bloomwatch/session"
)

// modulePath prefixes the types whose fields typeKeys walks even when
// they marshal themselves: the project's MarshalJSON methods only leave
// fields out, so the plain struct names every key they can write.
const modulePath = "github.com/bloomwatch/bloomwatch/"

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// typeKeys adds to into every key path a value of type t can print as
// JSON, omitempty fields included: array elements as "[]", nested keys
// joined by ".". A map's keys are data, so its path is a leaf, as is a
// type from outside the project that marshals itself (a hash, a time).
func typeKeys(t reflect.Type, prefix string, into map[string]bool, seen map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	own := strings.HasPrefix(t.PkgPath(), modulePath)
	if !own && (t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)) {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return
		}
		typeKeys(t.Elem(), prefix+"[]", into, seen)
	case reflect.Struct:
		if seen[t] {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
				typeKeys(ft, prefix, into, seen)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			into[p] = true
			typeKeys(f.Type, p, into, seen)
		}
	}
}

// TestJSONSchemaCoversEveryField holds docs/JSON.md to the Go types the
// commands print, not to one run's output: a key that only some runs
// print (an omitempty figure, a verdict that needs the truth) is listed
// before any run prints it, and a listed key the type lost is an error.
func TestJSONSchemaCoversEveryField(t *testing.T) {
	sch, err := loadSchema()
	require.NoError(t, err)
	cases := []struct {
		command string
		value   any
	}{
		{"bloomwatch sync", session.Summary{}},
		{"bloomwatch demo", session.Summary{}},
		{"bloomwatch privacy analyze", privacy.Report{}},
		{"bloomwatch broadcast", broadcastJSON{}},
		{"bloomwatch merkleblock verify", merkleblockJSON{}},
		{"bloomwatch privacy experiment", experiments.Result{}},
	}
	for _, c := range cases {
		documented, ok := sch[c.command]
		require.True(t, ok, "%s has no section in docs/JSON.md", c.command)
		keys := map[string]bool{}
		typeKeys(reflect.TypeOf(c.value), "", keys, map[reflect.Type]bool{})
		require.NotEmpty(t, keys, c.command)
		var missing []string
		for p := range keys {
			if _, ok := documented[p]; !ok {
				missing = append(missing, p)
			}
		}
		for p := range documented {
			if !keys[p] {
				missing = append(missing, p)
			}
		}
		sort.Strings(missing)
		for _, p := range missing {
			require.False(t, keys[p], "%s --json can print key %q, which docs/JSON.md does not list", c.command, p)
			require.FailNow(t, fmt.Sprintf("docs/JSON.md lists key %q for %s, which its Go type cannot print", p, c.command))
		}
	}
}
