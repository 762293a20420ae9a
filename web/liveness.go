package web

import (
	"fmt"
	"time"

	"github.com/cardexhq/cardex/registry"
)

// stripDays is how many days the agent page's uptime strip shows: the
// daily roll-ups the record carries (docs/liveness.md).
const stripDays = 30

// Geometry of the uptime strip, in SVG user units.
const (
	stripCellWidth = 8
	stripGap       = 2
	stripHeight    = 24
)

// stripCell is one day of the uptime strip.
type stripCell struct {
	X     int
	Class string // up, partial, down or none
	Title string // the tooltip (an SVG <title>): the day and what was seen
}

// livenessView is the agent page's liveness section: the strip is drawn
// on the server as inline SVG, so it needs no script.
type livenessView struct {
	L      *registry.Liveness
	Cells  []stripCell
	Width  int
	Height int
	First  string // the strip's first and last day
	Last   string
}

// uptimeStrip lays out the last stripDays UTC days ending today: a day
// with every counted probe up is "up", one with none up "down", a mix
// "partial", a day without probes "none".
func uptimeStrip(l *registry.Liveness, now time.Time) livenessView {
	v := livenessView{L: l, Width: stripDays*(stripCellWidth+stripGap) - stripGap, Height: stripHeight}
	byDay := map[string]registry.UptimeDay{}
	if l != nil {
		for _, d := range l.Days {
			byDay[d.Day] = d
		}
	}
	today := now.UTC()
	for i := range stripDays {
		day := today.AddDate(0, 0, i-(stripDays-1)).Format(time.DateOnly)
		c := stripCell{X: i * (stripCellWidth + stripGap), Class: "none", Title: day + ": not probed"}
		if d, ok := byDay[day]; ok && d.Probes > 0 {
			switch {
			case d.Up == d.Probes:
				c.Class = "up"
			case d.Up == 0:
				c.Class = "down"
			default:
				c.Class = "partial"
			}
			c.Title = fmt.Sprintf("%s: %d of %d probes answered (%.1f %%)", day, d.Up, d.Probes, 100*float64(d.Up)/float64(d.Probes))
		}
		if i == 0 {
			v.First = day
		}
		v.Last = day
		v.Cells = append(v.Cells, c)
	}
	return v
}

// percent formats an uptime share ("99.5 %"), or "—" without probes.
func percent(r *float64) string {
	if r == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f %%", 100**r)
}
