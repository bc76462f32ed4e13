package doctabletest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
)

// pkgDir is a package whose bounds table lists maxFileBytes and LineMax.
const pkgDir = "testdata/pkg"

func TestCoverage(t *testing.T) {
	rows := []doctable.Bound{
		{Name: "maxFileBytes", Value: 1 << 20, Unit: "bytes", Protects: "a file"},
		{Name: "LineMax", Value: 80, Unit: "bytes", Protects: "a line"},
	}
	require.NoError(t, coverage(pkgDir, "bounds", rows, nil))

	// Every constant of pkg.go counts: limitTimeout has no row.
	require.ErrorContains(t, coverage(pkgDir, "bounds", rows, []string{"pkg.go"}),
		"bound constants without a row in bounds (and so in the doc): limitTimeout (pkg.go)")

	// A row whose Name is not its Value's constant, one without a text.
	bad := append([]doctable.Bound(nil), rows...)
	bad[0].Name = "maxOther"
	bad[1].Protects = ""
	err := coverage(pkgDir, "bounds", bad, nil)
	require.ErrorContains(t, err, "bounds[0] is named maxOther but its Value is maxFileBytes")
	require.ErrorContains(t, err, "row of LineMax says nothing")

	require.ErrorContains(t, coverage(pkgDir, "missing", rows, nil), "declares no var missing")
	require.ErrorContains(t, coverage(pkgDir, "bounds", rows[:1], nil), "2 rows, its value 1")
}

func TestSyncDoc(t *testing.T) {
	begin, end := doctable.Markers("t", "go test ./x -update")
	doc := filepath.Join(t.TempDir(), "doc.md")
	require.NoError(t, os.WriteFile(doc, []byte("intro\n"+begin+"old\n"+end+"\nrest\n"), 0o600))
	r := Region{Name: "t", Command: "go test ./x -update", Table: "new\n"}

	stale, err := syncDoc(doc, []Region{r}, false)
	require.NoError(t, err)
	require.Equal(t, []Region{r}, stale)

	stale, err = syncDoc(doc, []Region{r}, true)
	require.NoError(t, err)
	require.Empty(t, stale)
	raw, err := os.ReadFile(doc)
	require.NoError(t, err)
	require.Equal(t, "intro\n"+begin+"new\n"+end+"\nrest\n", string(raw))

	stale, err = syncDoc(doc, []Region{r}, false)
	require.NoError(t, err)
	require.Empty(t, stale)

	_, err = syncDoc(doc, []Region{{Name: "other", Command: "c", Table: "x"}}, false)
	require.ErrorContains(t, err, `no region "other"`)
}
