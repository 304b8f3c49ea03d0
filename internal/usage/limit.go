package usage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Limit is a chat's daily budget (USAGE_DAILY_LIMIT): tokens, or an amount
// of money priced with [Prices]. The zero Limit sets none.
type Limit struct {
	// Tokens is the most prompt plus completion tokens a chat may use in
	// a day; 0 means no token limit.
	Tokens int64
	// Money is the most a chat may spend in a day; 0 means no money limit.
	Money float64
}

// ParseLimit parses USAGE_DAILY_LIMIT: a whole number of tokens (200000,
// also 200k or 2m), or an amount of money with a leading $ ($2.50). An empty
// s sets no limit.
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Limit{}, nil
	}
	if amount, ok := strings.CutPrefix(s, "$"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(amount), 64)
		if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
			return Limit{}, fmt.Errorf("usage: USAGE_DAILY_LIMIT: %q is not a positive amount", s)
		}
		return Limit{Money: v}, nil
	}
	mult := int64(1)
	num := strings.ToLower(s)
	switch {
	case strings.HasSuffix(num, "k"):
		mult, num = 1_000, num[:len(num)-1]
	case strings.HasSuffix(num, "m"):
		mult, num = 1_000_000, num[:len(num)-1]
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/mult {
		return Limit{}, fmt.Errorf("usage: USAGE_DAILY_LIMIT: %q is neither a number of tokens nor an amount like $2.50", s)
	}
	return Limit{Tokens: n * mult}, nil
}

// IsZero reports whether l sets no limit.
func (l Limit) IsZero() bool { return l.Tokens == 0 && l.Money == 0 }

// Exceeded reports whether a day's per-model totals reach l, with money
// priced by p (a model without a price costs nothing).
func (l Limit) Exceeded(day map[string]Tokens, p Prices) bool {
	if l.Tokens > 0 {
		var total int64
		for _, t := range day {
			total += t.Total()
		}
		if total >= l.Tokens {
			return true
		}
	}
	if l.Money > 0 {
		cost, _ := p.CostOf(day)
		if cost >= l.Money {
			return true
		}
	}
	return false
}

// String words l for the chat and the doctor: "200,000 tokens" or "$2.50".
func (l Limit) String() string {
	switch {
	case l.Tokens > 0:
		return FormatTokens(l.Tokens) + " tokens"
	case l.Money > 0:
		return FormatMoney(l.Money)
	}
	return "none"
}

// FormatTokens writes n with thousands separators (1,234,567).
func FormatTokens(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// FormatMoney writes an amount with a $ and two decimals, or four below a
// cent so that a cheap turn does not show as $0.00.
func FormatMoney(v float64) string {
	if v > 0 && v < 0.01 {
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return "$" + strconv.FormatFloat(v, 'f', 2, 64)
}
