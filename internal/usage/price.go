package usage

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Price is what a model costs, per million tokens: prompt tokens not served
// from the cache (Input), completion tokens (Output) and prompt tokens
// served from the provider's cache (Cached).
type Price struct {
	Input, Output, Cached float64
}

// Prices are the prices of the models, by model name (MODEL_PRICES).
type Prices map[string]Price

// ParsePrices parses MODEL_PRICES: comma-separated model=input/output/cached,
// each a price in money per million tokens (gpt-4.1-mini=0.40/1.60/0.10).
// The cached price may be left out (model=input/output); cached tokens are
// then priced as input. An empty s gives no prices.
func ParsePrices(s string) (Prices, error) {
	out := Prices{}
	var errs []error
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		model, spec, ok := strings.Cut(item, "=")
		model = strings.TrimSpace(model)
		if !ok || model == "" {
			errs = append(errs, fmt.Errorf("%q is not model=input/output/cached", item))
			continue
		}
		parts := strings.Split(spec, "/")
		if len(parts) != 2 && len(parts) != 3 {
			errs = append(errs, fmt.Errorf("%s: %q is not input/output/cached", model, spec))
			continue
		}
		var nums [3]float64
		bad := false
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "$")), 64)
			if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				errs = append(errs, fmt.Errorf("%s: %q is not a price", model, p))
				bad = true
				break
			}
			nums[i] = v
		}
		if bad {
			continue
		}
		if len(parts) == 2 {
			nums[2] = nums[0]
		}
		if _, dup := out[model]; dup {
			errs = append(errs, fmt.Errorf("%s is priced twice", model))
			continue
		}
		out[model] = Price{Input: nums[0], Output: nums[1], Cached: nums[2]}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("usage: MODEL_PRICES: %w", err)
	}
	return out, nil
}

// Cost returns what t cost on model, and false when model has no price
// and the provider reported no cost (CostUSD) either: a price wins over the
// reported cost. Prompt tokens include the cached ones, as providers count
// them.
func (p Prices) Cost(model string, t Tokens) (float64, bool) {
	price, ok := p[model]
	if !ok {
		if t.CostUSD > 0 {
			return t.CostUSD, true
		}
		return 0, false
	}
	cached := min(t.Cached, t.Prompt)
	fresh := t.Prompt - cached
	return (float64(fresh)*price.Input + float64(cached)*price.Cached + float64(t.Completion)*price.Output) / 1e6, true
}

// CostOf returns what the per-model totals cost, and the models among them
// that have no price (their tokens count for nothing in the sum).
func (p Prices) CostOf(byModel map[string]Tokens) (cost float64, unpriced []string) {
	for model, t := range byModel {
		c, ok := p.Cost(model, t)
		if !ok {
			if t.Total() > 0 {
				unpriced = append(unpriced, model)
			}
			continue
		}
		cost += c
	}
	return cost, unpriced
}
