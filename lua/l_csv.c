/*
 * l_csv.c: ec.write_csv(path, rows [, columns]), rows of flat tables to a CSV file through
 * the core's writer (ec_csv_open/row/close over ec_outfile: a temporary beside PATH renamed
 * into place, quoting by libcsv).  Every column is a non-empty, distinct name, as our own
 * readers require, and no two fields of a row may become one column.  Nested tables one level deep are flattened (memory.weights_bytes ->
 * memory_weights_bytes, interval.p10 -> epoch_p10_s, as l_result.c names them); arrays are
 * joined with "; ".  Every row is converted before the file is opened, so a bad row
 * raises without touching the disk; a write failure aborts the file and returns nil, msg.
 */
#define _POSIX_C_SOURCE 200809L /* mkdir, stat */

#include "lec_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Push the CSV text of the scalar at idx, or raise naming the field. */
static void push_cell(lua_State *L, int idx, lua_Integer row, const char *field)
{
    char buf[64];
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (lua_isinteger(L, idx))
            lua_pushfstring(L, "%I", (LUAI_UACINT)lua_tointeger(L, idx));
        else {
            ec_format_number((double)lua_tonumber(L, idx), buf, sizeof buf);
            lua_pushstring(L, buf);
        }
        break;
    case LUA_TBOOLEAN: lua_pushstring(L, lua_toboolean(L, idx) ? "1" : "0"); break;
    case LUA_TSTRING: {
        size_t len;
        const char *str = lua_tolstring(L, idx, &len);
        if (strlen(str) != len)
            luaL_error(L, "row %I, field '%s': the text has an embedded NUL byte", (LUAI_UACINT)row, field);
        lua_pushvalue(L, idx);
        break;
    }
    default:
        luaL_error(L, "row %I, field '%s': number, boolean or string expected, got %s",
                   (LUAI_UACINT)row, field, luaL_typename(L, idx));
    }
}

/* Record flat[name] = the string on top (popped) and seen[name] = true.  A name the row
 * already has with another text (a flat field and a nested one that flattens to it) raises:
 * one of the two would be dropped.  The same text twice is a mirror (a result's peak_bytes
 * and memory.peak_bytes) and is written once. */
static void put(lua_State *L, lua_Integer rowno, int flat, int seen, const char *name)
{
    if (name[0] == '\0')
        luaL_error(L, "row %I: a field with an empty name cannot be a column", (LUAI_UACINT)rowno);
    if (lua_getfield(L, flat, name) != LUA_TNIL && !lua_rawequal(L, -1, -2))
        luaL_error(L, "row %I: two fields with different values become column '%s' (a flat field and a "
                   "nested one)", (LUAI_UACINT)rowno, name);
    lua_pop(L, 1);
    lua_setfield(L, flat, name);
    lua_pushboolean(L, 1);
    lua_setfield(L, seen, name);
}

/* Is the table at idx empty? */
static int is_empty(lua_State *L, int idx)
{
    lua_pushnil(L);
    if (lua_next(L, idx) == 0)
        return 1;
    lua_pop(L, 2);
    return 0;
}

/* Flatten the row table at index row into the table at flat (name -> text). */
static void flatten(lua_State *L, lua_Integer rowno, int row, int flat, int seen)
{
    lua_pushnil(L);                                           /* k */
    while (lua_next(L, row) != 0) {                           /* k v */
        if (lua_type(L, -2) != LUA_TSTRING)
            luaL_error(L, "row %I: keys must be strings (got a %s key)", (LUAI_UACINT)rowno,
                       luaL_typename(L, -2));
        size_t klen;
        const char *key = lua_tolstring(L, -2, &klen);
        if (strlen(key) != klen)
            luaL_error(L, "row %I: a field name has an embedded NUL byte", (LUAI_UACINT)rowno);
        int v = lua_gettop(L);
        if (lua_type(L, v) != LUA_TTABLE) {
            push_cell(L, v, rowno, key);                      /* k v text */
            put(L, rowno, flat, seen, key);                          /* k v */
        } else if (lua_rawlen(L, v) > 0 || is_empty(L, v)) {
            /* An array, such as warnings: its items joined with "; ". */
            luaL_Buffer b;
            lua_Integer n = (lua_Integer)lua_rawlen(L, v);
            luaL_buffinit(L, &b);                             /* k v buf */
            for (lua_Integer i = 1; i <= n; i++) {
                if (i > 1)
                    luaL_addstring(&b, "; ");
                lua_rawgeti(L, v, i);                         /* k v buf item */
                push_cell(L, -1, rowno, key);                 /* k v buf item text */
                lua_remove(L, -2);                            /* k v buf text */
                luaL_addvalue(&b);                            /* k v buf */
            }
            luaL_pushresult(&b);                              /* k v text */
            put(L, rowno, flat, seen, key);                          /* k v */
        } else {
            lua_pushnil(L);                                   /* k v k2 */
            while (lua_next(L, v) != 0) {                     /* k v k2 v2 */
                if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) == LUA_TTABLE)
                    luaL_error(L, "row %I, field '%s': only one level of nesting with string "
                               "keys can be written", (LUAI_UACINT)rowno, key);
                size_t k2len;
                const char *key2 = lua_tolstring(L, -2, &k2len);
                if (strlen(key2) != k2len)
                    luaL_error(L, "row %I, field '%s': a name has an embedded NUL byte", (LUAI_UACINT)rowno, key);
                const char *col = ecL_result_nested_column(key, key2);
                if (col != NULL)
                    lua_pushstring(L, col);                   /* k v k2 v2 name */
                else
                    lua_pushfstring(L, "%s_%s", key, key2);   /* k v k2 v2 name */
                push_cell(L, -2, rowno, lua_tostring(L, -1)); /* k v k2 v2 name text */
                put(L, rowno, flat, seen, lua_tostring(L, -2));      /* k v k2 v2 name */
                lua_pop(L, 2);                                /* k v k2 */
            }
        }
        lua_settop(L, v - 1);                                 /* k */
    }
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Append name to the array cols (with n entries so far) unless used[name]. */
static void add_column(lua_State *L, int cols, int used, const char *name, lua_Integer *n)
{
    if (lua_getfield(L, used, name) != LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
    lua_setfield(L, used, name);
    lua_pushstring(L, name);
    lua_rawseti(L, cols, ++*n);
}

/* The default column order: config keys in ec_config_key_name order, then the result
 * columns of l_result.c, then any other field, sorted by name.  Pushes the array. */
static void default_columns(lua_State *L, int seen)
{
    lua_Integer n = 0;
    lua_newtable(L);                                          /* cols */
    int cols = lua_gettop(L);
    lua_newtable(L);                                          /* cols used */
    int used = lua_gettop(L);
    for (size_t i = 0; i < ec_config_key_count(); i++) {
        const char *name = ec_config_key_name(i);
        if (lua_getfield(L, seen, name) != LUA_TNIL)
            add_column(L, cols, used, name, &n);
        lua_pop(L, 1);
    }
    for (size_t i = 0; i < ecL_result_column_count(); i++) {
        const char *name = ecL_result_column_name(i);
        if (lua_getfield(L, seen, name) != LUA_TNIL)
            add_column(L, cols, used, name, &n);
        lua_pop(L, 1);
    }
    size_t n_other = 0, n_seen = 0;
    lua_pushnil(L);
    while (lua_next(L, seen) != 0) {
        n_seen++;
        lua_pop(L, 1);
    }
    /* The key strings stay alive in seen while the array of pointers is sorted. */
    const char **other = (const char **)lua_newuserdatauv(L, (n_seen + 1) * sizeof *other, 0);
    lua_pushnil(L);                                           /* cols used arr k */
    while (lua_next(L, seen) != 0) {                          /* cols used arr k v */
        lua_pop(L, 1);
        const char *name = lua_tostring(L, -1);
        if (lua_getfield(L, used, name) == LUA_TNIL)
            other[n_other++] = name;
        lua_pop(L, 1);
    }
    qsort(other, n_other, sizeof *other, compare_names);
    for (size_t i = 0; i < n_other; i++)
        add_column(L, cols, used, other[i], &n);
    lua_settop(L, cols);                                      /* cols */
}

/* ec.write_csv(path, rows [, columns]) -> true | nil, msg, code */
static int l_csv_write_csv(lua_State *L)
{
    ec_ctx *ctx = ecL_ctx(L);
    ecL_check_output(L, ecL_checkpath(L, 1));
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TTABLE);
    lua_settop(L, 3);
    lua_Integer n_rows = luaL_len(L, 2);

    lua_createtable(L, n_rows > 0 && n_rows < 1 << 20 ? (int)n_rows : 0, 0); /* 4: flats */
    lua_newtable(L);                                          /* 5: seen */
    for (lua_Integer i = 1; i <= n_rows; i++) {
        if (lua_geti(L, 2, i) != LUA_TTABLE)                  /* row */
            return luaL_error(L, "bad row %I (table expected, got %s)", (LUAI_UACINT)i,
                              luaL_typename(L, -1));
        lua_newtable(L);                                      /* row flat */
        flatten(L, i, lua_gettop(L) - 1, lua_gettop(L), 5);
        lua_seti(L, 4, i);                                    /* row */
        lua_pop(L, 1);
    }

    if (lua_isnil(L, 3)) {
        default_columns(L, 5);                                /* 6: cols */
    } else {
        lua_Integer n = luaL_len(L, 3);
        lua_createtable(L, n > 0 && n < 1 << 20 ? (int)n : 0, 0); /* 6: cols */
        lua_newtable(L);                                      /* 7: names given */
        for (lua_Integer j = 1; j <= n; j++) {
            size_t len;
            if (lua_geti(L, 3, j) != LUA_TSTRING)
                return luaL_argerror(L, 3, lua_pushfstring(L, "column %I is not a string",
                                                            (LUAI_UACINT)j));
            const char *name = lua_tolstring(L, -1, &len);
            /* what ec.load_runs and every reader of ours would refuse */
            if (len == 0 || strlen(name) != len)
                return luaL_argerror(L, 3, lua_pushfstring(L, "column %I is empty or has a NUL byte", (LUAI_UACINT)j));
            if (lua_getfield(L, 7, name) != LUA_TNIL)
                return luaL_argerror(L, 3, lua_pushfstring(L, "column '%s' is given twice", name));
            lua_pop(L, 1);
            lua_pushboolean(L, 1);
            lua_setfield(L, 7, name);
            lua_seti(L, 6, j);
        }
        lua_pop(L, 1);                                        /* 6: cols */
    }
    size_t n_cols = (size_t)luaL_len(L, 6);
    const char **fields = (const char **)lua_newuserdatauv(L, (n_cols + 1) * sizeof *fields, 0); /* 7 */

    void **slot = ecL_newbox(L, ecL_abort_csv);              /* 8: box */
    ec_csv_writer *w = NULL;
    int st = ec_csv_open(ctx, lua_tostring(L, 1), &w);
    *slot = w;
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);

    /* Field strings stay alive in the cols and flat tables while a row is written. */
    for (size_t j = 0; j < n_cols; j++) {
        lua_geti(L, 6, (lua_Integer)j + 1);
        fields[j] = lua_tostring(L, -1);
        lua_pop(L, 1);
    }
    if (n_cols > 0 && (st = ec_csv_row(w, fields, n_cols)) != EC_OK)
        goto fail;
    for (lua_Integer i = 1; i <= n_rows && n_cols > 0; i++) {
        lua_geti(L, 4, i);                                    /* flat */
        for (size_t j = 0; j < n_cols; j++) {
            lua_geti(L, 6, (lua_Integer)j + 1);               /* flat name */
            lua_gettable(L, -2);                              /* flat text|nil */
            fields[j] = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
            lua_pop(L, 1);                                    /* flat */
        }
        st = ec_csv_row(w, fields, n_cols);
        lua_pop(L, 1);
        if (st != EC_OK)
            goto fail;
    }
    st = ec_csv_close((ec_csv_writer *)ecL_unbox(L, 8));
    if (st != EC_OK)
        return ecL_fail(L, ctx, st);
    lua_pushboolean(L, 1);
    return 1;

fail:
    ec_csv_abort((ec_csv_writer *)ecL_unbox(L, 8));
    return ecL_fail(L, ctx, st);
}

/* ec.mkdir(path) -> true | nil, msg, code: create a folder and its parents (mkdir -p)
 * without a shell; in a sandbox, only below the current folder. */
static int l_csv_mkdir(lua_State *L)
{
    size_t len;
    const char *path = ecL_checkpath(L, 1);
    len = strlen(path);
    if (len == 0)
        return luaL_argerror(L, 1, "empty path");
    luaL_Buffer b;
    char *buf = luaL_buffinitsize(L, &b, len + 1);
    memcpy(buf, path, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        struct stat st;
        if (stat(buf, &st) != 0) {
            ecL_check_output(L, buf); /* in a sandbox: its parent, made just before, must be inside */
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                lua_pushnil(L);
                lua_pushfstring(L, "EIO: %s: cannot create the folder: %s", buf, strerror(errno));
                lua_pushliteral(L, "EIO");
                return 3;
            }
        } else if (!S_ISDIR(st.st_mode)) {
            lua_pushnil(L);
            lua_pushfstring(L, "EIO: %s: exists and is not a folder", buf);
            lua_pushliteral(L, "EIO");
            return 3;
        }
        buf[i] = c;
    }
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg csv_funcs[] = {
    {"write_csv", l_csv_write_csv},
    {"mkdir", l_csv_mkdir},
    {NULL, NULL},
};

int ecL_open_csv(lua_State *L)
{
    luaL_setfuncs(L, csv_funcs, 1);
    return 0;
}
