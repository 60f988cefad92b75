/*
 * readable.c: durations and amounts of money as people read them in the answers (the CLI's
 * predict, compare, sweep, plan and optimize texts, the Python binding's summaries): the unit
 * that keeps the number short, thousands separated.  Nothing here is read back; CSVs keep
 * seconds and plain numbers (numfmt.c).
 */
#include "base/base.h"

#include <stdio.h>

const char *ec_format_duration(double s, char *buf, size_t n)
{
    if (buf == NULL || n == 0)
        return buf;
    if (!(s > 0))
        snprintf(buf, n, "-");
    else if (s < 1)
        snprintf(buf, n, "%.3g ms", s * 1e3);
    else if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else if (s < 3 * 86400)
        snprintf(buf, n, "%.1f h", s / 3600);
    else
        snprintf(buf, n, "%.1f days", s / 86400);
    return buf;
}

const char *ec_format_money(double amount, const char *currency, char *buf, size_t n)
{
    if (buf == NULL || n == 0)
        return buf;
    const char *cur = currency != NULL && currency[0] != '\0' ? currency : "";
    const char *sep = cur[0] != '\0' ? " " : "";
    if (!(amount > 0)) {
        snprintf(buf, n, "-");
        return buf;
    }
    if (amount < 1) {
        snprintf(buf, n, "%s%s%.3g", cur, sep, amount);
        return buf;
    }
    /* cents below 100,000, whole units above, thousands separated: "USD 1,021.44", "USD 1,082,388" */
    char digits[64];
    int len = snprintf(digits, sizeof digits, amount < 1e5 ? "%.2f" : "%.0f", amount);
    if (len < 0 || len >= (int)sizeof digits) { /* beyond any price: plain */
        snprintf(buf, n, "%s%s%g", cur, sep, amount);
        return buf;
    }
    int whole = len;
    for (int i = 0; i < len; i++)
        if (digits[i] == '.')
            whole = i;
    char grouped[96];
    size_t k = 0;
    for (int i = 0; i < len && k + 2 < sizeof grouped; i++) {
        if (i > 0 && i < whole && (whole - i) % 3 == 0)
            grouped[k++] = ',';
        grouped[k++] = digits[i];
    }
    grouped[k] = '\0';
    snprintf(buf, n, "%s%s%s", cur, sep, grouped);
    return buf;
}
