package spv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
)

// reliabilityDoc is the doc the bounds tables are generated into.
const reliabilityDoc = "../docs/RELIABILITY.md"

// boundsTableCommand regenerates the tables TestReliabilityBoundsTable
// holds.
const boundsTableCommand = "go test ./spv -run TestReliabilityBoundsTable -update"

// TestReliabilityBoundsTable holds docs/RELIABILITY.md's two bounds
// tables to the code: the rate budget of every command btcd's wire knows
// (hostile.FloodCommands, the enumeration TestEveryMessageTypeHasABudget
// floods) and of the commands it does not, and every named bound of the
// package (bounds, checked against the source: every constant of
// budgets.go and every max* constant, each once). A difference fails with
// the fresh table; -update writes it into the doc.
func TestReliabilityBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", doctable.Rows(bounds), "budgets.go")
	named, err := doctable.Render("", doctable.Rows(bounds))
	require.NoError(t, err)
	doctabletest.Sync(t, reliabilityDoc,
		doctabletest.Region{Name: "message budgets", Command: boundsTableCommand, Table: messageBudgetTable(t)},
		doctabletest.Region{Name: "named bounds", Command: boundsTableCommand, Table: named},
	)
}

// messageBudgetTable renders the rate budget of every command btcd's wire
// knows, one row for the commands of each budget in the flood's order, the
// default's row naming the commands wire does not know too.
func messageBudgetTable(t *testing.T) string {
	var order []string             // a row's cells, by first command
	names := map[string][]string{} // cells -> commands
	var unknown []string
	for _, cmd := range hostile.FloodCommands() {
		if !wireKnows(t, cmd) {
			unknown = append(unknown, "`"+cmd+"`")
			continue
		}
		cells := budgetCells(cmd)
		if _, ok := names[cells]; !ok {
			order = append(order, cells)
		}
		names[cells] = append(names[cells], "`"+cmd+"`")
	}
	require.NotEmpty(t, unknown, "the flood holds commands wire does not know")
	defaults := budgetCells(unknownCmd)
	require.Contains(t, names, defaults, "some command wire knows has the default budget")
	var b strings.Builder
	b.WriteString("| commands | rate (messages a second) | burst | payload | what the budget protects |\n|---|---|---|---|---|\n")
	for _, cells := range order {
		label := strings.Join(names[cells], ", ")
		if cells == defaults {
			label += "; any command wire does not know (of the soak's: " + strings.Join(unknown, ", ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", label, cells)
	}
	return b.String()
}

// budgetCells renders cmd's budget as the cells of its row after the
// commands.
func budgetCells(cmd string) string {
	bud := budgetFor(cmd)
	rate, burst := "none: an answer", "-"
	if !math.IsInf(bud.Rate, 1) {
		rate, burst = strconv.FormatFloat(bud.Rate, 'g', -1, 64), doctable.Group(int64(bud.Burst))
		if _, named := msgBudgets[cmd]; !named {
			rate += " (the default)"
		}
	}
	payload := "wire's cap"
	if limit, ok := payloadCap(cmd); ok {
		payload = doctable.FormatValue(int64(limit), "bytes") + "; more bans"
	}
	return rate + " | " + burst + " | " + payload + " | " + bud.Why
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
