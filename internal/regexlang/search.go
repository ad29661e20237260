package regexlang

import (
	"slices"
	"strconv"
	"strings"
)

// witnesses finds the shortest strings within the bounds that lead to an accepting state,
// searching the explored graph by length: layer k holds the states some string of k runes
// reaches. The layers of a finite graph repeat eventually, so once a layer within the bounds
// repeats one seen within them, no longer string can reach anything new. ok is false when the
// bound on steps was reached first.
func (g *graph) witnesses(b Bounds) (found []string, ok bool) {
	live := g.live()
	if !live[0] {
		return nil, true
	}
	type from struct {
		id int
		r  rune
	}
	// layers[k] maps a state of layer k to how it was first reached; order keeps the order of
	// discovery, readable runes first.
	var layers []map[int]from
	var orders [][]int
	layers, orders = append(layers, map[int]from{0: {id: -1}}), append(orders, []int{0})
	seen := map[string]bool{}
	extra := 0 // layers searched after the first that had a witness
	for k := 0; ; k++ {
		order := orders[k]
		if k >= b.Min {
			for _, id := range order {
				if g.accepts[id] && len(found) < MaxExamples {
					var rs []rune
					for at, l := id, k; l > 0; l-- {
						f := layers[l][at]
						rs = append(rs, f.r)
						at = f.id
					}
					slices.Reverse(rs)
					found = append(found, string(rs))
				}
			}
			if len(found) > 0 {
				if extra++; len(found) >= MaxExamples || extra > 3 {
					return found, true
				}
			}
			key := layerKey(order)
			if seen[key] {
				return found, true // every later layer repeats one already searched
			}
			seen[key] = true
		}
		if b.Max >= 0 && k >= b.Max {
			return found, true
		}
		next, nextOrder := map[int]from{}, []int(nil)
		for _, id := range order {
			for _, e := range g.edges[id] {
				g.steps++
				if !live[e.to] {
					continue
				}
				if _, ok := next[e.to]; !ok {
					next[e.to] = from{id: id, r: e.r}
					nextOrder = append(nextOrder, e.to)
				}
			}
		}
		if g.steps > MaxSteps {
			return nil, false
		}
		if len(nextOrder) == 0 {
			return found, true
		}
		layers, orders = append(layers, next), append(orders, nextOrder)
	}
}

// layerKey identifies a layer by its set of states.
func layerKey(ids []int) string {
	s := slices.Sorted(slices.Values(ids))
	var b strings.Builder
	for _, id := range s {
		b.WriteString(strconv.Itoa(id))
		b.WriteByte(',')
	}
	return b.String()
}

// live marks the states from which an accepting state can be reached.
func (g *graph) live() []bool {
	back := make([][]int, len(g.states))
	for id, es := range g.edges {
		for _, e := range es {
			back[e.to] = append(back[e.to], id)
		}
	}
	live := make([]bool, len(g.states))
	var stack []int
	for id, a := range g.accepts {
		if a {
			live[id] = true
			stack = append(stack, id)
		}
	}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range back[id] {
			if !live[p] {
				live[p] = true
				stack = append(stack, p)
			}
		}
	}
	return live
}
