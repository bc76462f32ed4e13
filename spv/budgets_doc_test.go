package spv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet/hostile"
)

// updateDocs makes TestReliabilityBoundsTable rewrite docs/RELIABILITY.md's
// generated tables instead of failing on a difference.
var updateDocs = flag.Bool("update", false, "rewrite docs/RELIABILITY.md's generated bounds tables")

// reliabilityDoc is the doc the bounds tables are generated into.
const reliabilityDoc = "../docs/RELIABILITY.md"

// TestReliabilityBoundsTable holds docs/RELIABILITY.md's two bounds
// tables to the code: the rate budget of every command btcd's wire knows
// (hostile.FloodCommands, the enumeration TestEveryMessageTypeHasABudget
// floods) and of the commands it does not, and every named bound of the
// package (bounds, checked against the source: every constant of
// budgets.go and every max* constant, each once). A difference fails with
// the fresh table; -update writes it into the doc.
func TestReliabilityBoundsTable(t *testing.T) {
	checkBoundsCoverSource(t)
	doc, err := os.ReadFile(reliabilityDoc)
	require.NoError(t, err)
	text := string(doc)
	for _, g := range []struct{ name, table string }{
		{"message budgets", messageBudgetTable(t)},
		{"named bounds", namedBoundsTable(t)},
	} {
		next, old, err := replaceGenerated(text, g.name, g.table)
		require.NoError(t, err)
		if old != g.table && !*updateDocs {
			t.Errorf("docs/RELIABILITY.md's %q table differs from the code; "+
				"run `go test ./spv -run TestReliabilityBoundsTable -update`, or paste:\n%s", g.name, g.table)
		}
		text = next
	}
	if *updateDocs && text != string(doc) {
		require.NoError(t, os.WriteFile(reliabilityDoc, []byte(text), 0o644))
	}
}

// replaceGenerated replaces the text between the generated block's markers
// named name with table, returning the new text and the block's old
// content.
func replaceGenerated(text, name, table string) (next, old string, err error) {
	begin := "<!-- begin generated: " + name + " (go test ./spv -run TestReliabilityBoundsTable -update) -->\n"
	end := "<!-- end generated: " + name + " -->"
	i := strings.Index(text, begin)
	j := strings.Index(text, end)
	if i < 0 || j < i {
		return "", "", fmt.Errorf("docs/RELIABILITY.md lacks the markers of the %q table: %q ... %q", name, begin, end)
	}
	i += len(begin)
	return text[:i] + table + text[j:], text[i:j], nil
}

// messageBudgetTable renders the rate budget of every command btcd's wire
// knows, in the flood's order, then the one of every command it does not.
func messageBudgetTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| command | rate (messages a second) | burst | payload | what the budget protects |\n|---|---|---|---|---|\n")
	var unknown []string
	for _, cmd := range hostile.FloodCommands() {
		if !wireKnows(t, cmd) {
			unknown = append(unknown, "`"+cmd+"`")
			continue
		}
		writeBudgetRow(&b, "`"+cmd+"`", cmd)
	}
	require.NotEmpty(t, unknown, "the flood holds commands wire does not know")
	writeBudgetRow(&b, "any command wire does not know (of the soak's: "+strings.Join(unknown, ", ")+")", unknownCmd)
	return b.String()
}

// writeBudgetRow writes the row of cmd's budget under the label name.
func writeBudgetRow(b *strings.Builder, name, cmd string) {
	bud := budgetFor(cmd)
	rate, burst := "none: an answer", "-"
	if !math.IsInf(bud.Rate, 1) {
		rate, burst = strconv.FormatFloat(bud.Rate, 'g', -1, 64), group(int64(bud.Burst))
		if _, named := msgBudgets[cmd]; !named {
			rate += " (the default)"
		}
	}
	payload := "wire's cap"
	if limit, ok := payloadCap(cmd); ok {
		payload = formatValue(int64(limit), "bytes") + "; more bans"
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", name, rate, burst, payload, bud.Why)
}

// wireKnows reports whether btcd's wire decodes cmd: an empty payload of a
// command it does not know reads as wire.ErrUnknownMessage.
func wireKnows(t *testing.T, cmd string) bool {
	var name [wire.CommandSize]byte
	copy(name[:], cmd)
	var msg bytes.Buffer
	sum := chainhash.DoubleHashB(nil)
	require.NoError(t, binary.Write(&msg, binary.LittleEndian, struct {
		Net      uint32
		Command  [wire.CommandSize]byte
		Length   uint32
		Checksum [4]byte
	}{uint32(wire.SimNet), name, 0, [4]byte(sum[:4])}))
	_, _, err := wire.ReadMessage(&msg, wire.ProtocolVersion, wire.SimNet)
	return !errors.Is(err, wire.ErrUnknownMessage)
}

// namedBoundsTable renders bounds in their order.
func namedBoundsTable(t *testing.T) string {
	var b strings.Builder
	b.WriteString("| bound | value | what it bounds |\n|---|---|---|\n")
	for _, bd := range bounds {
		v, err := boundValue(bd)
		require.NoError(t, err)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", bd.Name, v, bd.Protects)
	}
	return b.String()
}

// boundValue formats a bound's value in its unit.
func boundValue(bd bound) (string, error) {
	switch v := bd.Value.(type) {
	case time.Duration:
		if v%time.Minute == 0 {
			return strconv.FormatInt(int64(v/time.Minute), 10) + " min", nil
		}
		return strconv.FormatFloat(v.Seconds(), 'g', -1, 64) + " s", nil
	case int:
		return formatValue(int64(v), bd.Unit), nil
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64) + " " + bd.Unit, nil
	}
	return "", fmt.Errorf("bound %s: value of type %T", bd.Name, bd.Value)
}

// formatValue writes n in unit: bytes in B below 64 KiB, else in KiB or
// MiB when whole; other units after the grouped number.
func formatValue(n int64, unit string) string {
	if unit != "bytes" {
		return group(n) + " " + unit
	}
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return group(n>>20) + " MiB"
	case n >= 64<<10 && n%(1<<10) == 0:
		return group(n>>10) + " KiB"
	}
	return group(n) + " B"
}

// group writes n with a comma between groups of three digits.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// checkBoundsCoverSource holds bounds to the package's source: a row for
// every constant declared in budgets.go and every constant of the package
// named max* or Max*, no row for anything else, each once, and each row's
// Value the very constant its Name says.
func checkBoundsCoverSource(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	want := map[string]string{} // constant -> file
	var table *ast.CompositeLit
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, s := range gd.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for i, id := range s.Names {
						lower := strings.ToLower(id.Name)
						if gd.Tok == token.CONST && (path == "budgets.go" || strings.HasPrefix(lower, "max")) {
							want[id.Name] = path
						}
						if gd.Tok == token.VAR && path == "budgets.go" && id.Name == "bounds" {
							table, _ = s.Values[i].(*ast.CompositeLit)
						}
					}
				}
			}
		}
	}
	require.NotNil(t, table, "budgets.go declares var bounds = []bound{...}")
	require.Len(t, table.Elts, len(bounds))
	seen := map[string]bool{}
	for i, e := range table.Elts {
		row, ok := e.(*ast.CompositeLit)
		require.True(t, ok, "bounds[%d] is a literal", i)
		require.GreaterOrEqual(t, len(row.Elts), 2, "bounds[%d]", i)
		id, ok := row.Elts[1].(*ast.Ident)
		require.True(t, ok, "bounds[%d]'s Value is a constant's name", i)
		name := bounds[i].Name
		require.Equal(t, name, id.Name, "bounds[%d]'s Name is the constant its Value is", i)
		_, declared := want[name]
		require.True(t, declared, "bounds names %s, which is no constant of budgets.go nor a max* constant", name)
		require.False(t, seen[name], "%s is listed twice", name)
		seen[name] = true
		require.NotEmpty(t, bounds[i].Protects, name)
	}
	var missing []string
	for name, file := range want {
		if !seen[name] {
			missing = append(missing, name+" ("+file+")")
		}
	}
	sort.Strings(missing)
	require.Empty(t, missing, "a bound without a row in budgets.go's bounds (and so in docs/RELIABILITY.md)")
}
