/* The message decoder, compiled: it runs a decode program (kafkamock/codec/decode_program.py builds one from a
 * message's schema at one version) over the bytes and builds the same Messages the generated Python decoder builds.
 *
 * It only takes the common road. Anything else (a field or count that does not fit, a null where none is allowed,
 * a string over Kafka's limit or not UTF-8, a varint longer than Kafka's, a tagged field on the wire) makes it
 * give up, and the caller runs the generated Python decoder, which either decodes the message or raises the exact
 * DecodeError. So this code never decides that bytes are bad: it is only ever stricter than its twin.
 *
 * A program is nested tuples:
 *   struct  = (class, reads, fields, flexible)
 *   reads   = ((slot, op, arg...), ...)         what is on the wire, in wire order; read i's slot is i
 *   fields  = ((key, slot, default_kind, default), ...)   the Message's keys in schema order: values[slot], or
 *             when slot < 0 a default: the object itself (DEF_CONST), a new empty list (DEF_LIST) or default()
 *   op args: STRING/BYTES/RECORDS (compact, nullable); ARRAY (compact, nullable, element op, element arg);
 *            STRUCT (nullable, struct program); the fixed-width ops take none.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum {
    OP_BOOL = 1, OP_INT8, OP_INT16, OP_UINT16, OP_INT32, OP_UINT32, OP_INT64, OP_FLOAT64, OP_UUID,
    OP_STRING, OP_BYTES, OP_RECORDS, OP_ARRAY, OP_STRUCT
};
enum { DEF_CONST = 0, DEF_LIST = 1, DEF_CALL = 2 };
#define MAX_STRING 32767
#define MAX_SLOTS 64

typedef struct {
    const unsigned char *b;
    Py_ssize_t n, p;
    PyObject *data;     /* what bytes and records fields are sliced from */
    PyObject *mv;       /* records fields: sliced from this instead, when not None */
} Reader;

static PyObject *ZERO_UUID, *UUID_TYPE, *SAFE_UNKNOWN, *STR_INT, *STR_IS_SAFE, *EMPTY_TUPLE;

static int
uvarint(Reader *r, unsigned long long *out)
{
    /* At most 5 bytes, as the Python decoder reads them. */
    unsigned long long v = 0;
    for (int shift = 0; shift <= 28; shift += 7) {
        if (r->p >= r->n)
            return -1;
        unsigned char x = r->b[r->p++];
        v |= (unsigned long long)(x & 0x7F) << shift;
        if (x < 0x80) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int
need(Reader *r, Py_ssize_t k)
{
    return r->n - r->p >= k ? 0 : -1;
}

static unsigned long long
be(const unsigned char *q, int k)
{
    unsigned long long v = 0;
    for (int i = 0; i < k; i++)
        v = (v << 8) | q[i];
    return v;
}

/* A length or count prefix: compact (unsigned varint, less one) or a signed int16/int32. Negative: null. */
static int
length(Reader *r, int compact, int width, long long *out)
{
    if (compact) {
        unsigned long long v;
        if (uvarint(r, &v) < 0)
            return -1;
        *out = (long long)v - 1;
        return 0;
    }
    if (need(r, width) < 0)
        return -1;
    unsigned long long v = be(r->b + r->p, width);
    r->p += width;
    *out = width == 2 ? (long long)(int16_t)v : (long long)(int32_t)v;
    return 0;
}

static PyObject *decode_struct(Reader *r, PyObject *program);

static PyObject *
uuid_at(const unsigned char *q)
{
    static const unsigned char zero[16];
    if (memcmp(q, zero, 16) == 0)
        return Py_NewRef(ZERO_UUID);
    PyObject *value = _PyLong_FromByteArray(q, 16, 0, 0);
    if (value == NULL)
        return NULL;
    PyTypeObject *type = (PyTypeObject *)UUID_TYPE;
    PyObject *u = type->tp_alloc(type, 0);
    if (u == NULL || PyObject_GenericSetAttr(u, STR_INT, value) < 0
            || PyObject_GenericSetAttr(u, STR_IS_SAFE, SAFE_UNKNOWN) < 0) {
        Py_XDECREF(u);
        Py_DECREF(value);
        return NULL;
    }
    Py_DECREF(value);
    return u;
}

/* A string: ASCII (nearly every name and id on the wire) copied as is, anything else through the UTF-8 decoder
 * (strict, as bytes.decode()). */
static PyObject *
string_at(const unsigned char *q, Py_ssize_t len)
{
    for (Py_ssize_t i = 0; i < len; i++) {
        if (q[i] & 0x80)
            return PyUnicode_DecodeUTF8((const char *)q, len, "strict");
    }
    PyObject *s = PyUnicode_New(len, 127);
    if (s != NULL && len)
        memcpy(PyUnicode_DATA(s), q, (size_t)len);
    return s;
}

static PyObject *
fixed(Reader *r, long op)
{
    static const int widths[] = {0, 1, 1, 2, 2, 4, 4, 8, 8, 16};
    int w = widths[op];
    if (need(r, w) < 0)
        return NULL;
    const unsigned char *q = r->b + r->p;
    r->p += w;
    switch (op) {
    case OP_BOOL: return Py_NewRef(q[0] ? Py_True : Py_False);
    case OP_INT8: return PyLong_FromLong((signed char)q[0]);
    case OP_INT16: return PyLong_FromLong((int16_t)be(q, 2));
    case OP_UINT16: return PyLong_FromLong((long)be(q, 2));
    case OP_INT32: return PyLong_FromLong((int32_t)be(q, 4));
    case OP_UINT32: return PyLong_FromUnsignedLongLong(be(q, 4));
    case OP_INT64: return PyLong_FromLongLong((long long)be(q, 8));
    case OP_FLOAT64: {
        double d = PyFloat_Unpack8((const char *)q, 0);
        if (d == -1.0 && PyErr_Occurred())
            return NULL;
        return PyFloat_FromDouble(d);
    }
    case OP_UUID: return uuid_at(q);
    }
    return NULL;
}

static PyObject *
value(Reader *r, long op, PyObject *read, Py_ssize_t at)
{
    /* ``read`` holds the op's arguments from index ``at`` on. */
    if (op <= OP_UUID)
        return fixed(r, op);
    int compact = PyTuple_GET_ITEM(read, at) == Py_True;
    int nullable = PyTuple_GET_ITEM(read, at + 1) == Py_True;
    long long len;
    if (op == OP_STRUCT) {
        if (nullable) {
            if (need(r, 1) < 0)
                return NULL;
            if (r->b[r->p++] > 127)
                Py_RETURN_NONE;
        }
        return decode_struct(r, PyTuple_GET_ITEM(read, at + 2));
    }
    if (length(r, compact, op == OP_STRING ? 2 : 4, &len) < 0)
        return NULL;
    if (len < 0) {
        if (nullable)
            Py_RETURN_NONE;
        return NULL;
    }
    if (op == OP_ARRAY) {
        if (len > r->n - r->p)
            return NULL;
        long elem = PyLong_AsLong(PyTuple_GET_ITEM(read, at + 2));
        PyObject *list = PyList_New((Py_ssize_t)len);
        if (list == NULL)
            return NULL;
        for (Py_ssize_t i = 0; i < (Py_ssize_t)len; i++) {
            PyObject *item = value(r, elem, read, at + 3);
            if (item == NULL) {
                Py_DECREF(list);
                return NULL;
            }
            PyList_SET_ITEM(list, i, item);
        }
        return list;
    }
    if (op == OP_STRING && compact && len > MAX_STRING)
        return NULL;
    if (len > r->n - r->p)
        return NULL;
    Py_ssize_t start = r->p;
    r->p += (Py_ssize_t)len;
    if (op == OP_STRING)
        return string_at(r->b + start, (Py_ssize_t)len);
    PyObject *from = op == OP_RECORDS && r->mv != Py_None ? r->mv : r->data;
    return PySequence_GetSlice(from, start, start + (Py_ssize_t)len);
}

static PyObject *
decode_struct(Reader *r, PyObject *program)
{
    PyObject *cls = PyTuple_GET_ITEM(program, 0);
    PyObject *reads = PyTuple_GET_ITEM(program, 1);
    PyObject *fields = PyTuple_GET_ITEM(program, 2);
    int flexible = PyTuple_GET_ITEM(program, 3) == Py_True;
    PyObject *values[MAX_SLOTS];
    Py_ssize_t nreads = PyTuple_GET_SIZE(reads), done = 0;
    PyObject *out = NULL;

    for (; done < nreads; done++) {          /* read ``done`` fills values[done] (its slot) */
        PyObject *read = PyTuple_GET_ITEM(reads, done);
        PyObject *v = value(r, PyLong_AsLong(PyTuple_GET_ITEM(read, 1)), read, 2);
        if (v == NULL)
            goto fail;
        values[done] = v;
    }
    if (flexible) {              /* an empty tagged-field section, one zero byte; a tagged field: Python's road */
        if (need(r, 1) < 0 || r->b[r->p] != 0)
            goto fail;
        r->p++;
    }
    out = ((PyTypeObject *)cls)->tp_new((PyTypeObject *)cls, EMPTY_TUPLE, NULL);
    if (out == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(fields); i++) {
        PyObject *field = PyTuple_GET_ITEM(fields, i);
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(field, 1));
        PyObject *v;
        if (slot >= 0) {
            v = Py_NewRef(values[slot]);
        } else {
            long kind = PyLong_AsLong(PyTuple_GET_ITEM(field, 2));
            PyObject *d = PyTuple_GET_ITEM(field, 3);
            v = kind == DEF_CONST ? Py_NewRef(d) : kind == DEF_LIST ? PyList_New(0) : PyObject_CallNoArgs(d);
            if (v == NULL)
                goto fail;
        }
        int bad = PyDict_SetItem(out, PyTuple_GET_ITEM(field, 0), v);
        Py_DECREF(v);
        if (bad < 0)
            goto fail;
    }
    for (Py_ssize_t i = 0; i < nreads; i++)
        Py_DECREF(values[i]);
    return out;
fail:
    for (Py_ssize_t i = 0; i < done; i++)
        Py_DECREF(values[i]);
    Py_XDECREF(out);
    return NULL;
}

/* decode_from(program, fallback, data, pos, mv=None) -> (message, end): the program's road, else fallback(data,
 * pos, mv), the generated Python decoder (also for any data that is not one contiguous buffer). */
static PyObject *
decode_from(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *mv = Py_None;
    Py_ssize_t nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nkw == 1 && nargs == 4 && PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0))
            && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "mv") == 0) {
        mv = args[4];
    } else if (nkw != 0 || nargs < 4 || nargs > 5) {
        PyErr_SetString(PyExc_TypeError, "decode_from(program, fallback, data, pos, mv=None)");
        return NULL;
    } else if (nargs == 5) {
        mv = args[4];
    }
    PyObject *program = args[0], *fallback = args[1], *data = args[2];
    PyObject *result = NULL;
    Py_ssize_t pos = PyLong_Check(args[3]) ? PyLong_AsSsize_t(args[3]) : -1;
    Py_buffer view;
    if (pos >= 0 && PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) == 0) {
        if (pos <= view.len) {
            Reader r = {(const unsigned char *)view.buf, view.len, pos, data, mv};
            PyObject *message = decode_struct(&r, program);
            if (message != NULL)
                result = Py_BuildValue("(Nn)", message, r.p);
        }
        PyBuffer_Release(&view);
    }
    if (result != NULL)
        return result;
    PyErr_Clear();
    PyObject *again[3] = {data, args[3], mv};
    return PyObject_Vectorcall(fallback, again, 3, NULL);
}

/* decode(program, fallback, data) -> message: exactly one message in ``data`` (bytes), else fallback(data), the
 * Python road that makes the same check and raises the exact DecodeError. */
static PyObject *
decode(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "decode(program, fallback, data)");
        return NULL;
    }
    PyObject *data = args[2];
    if (PyBytes_CheckExact(data)) {
        Reader r = {(const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data), 0, data, Py_None};
        PyObject *message = decode_struct(&r, args[0]);
        if (message != NULL) {
            if (r.p == r.n)
                return message;
            Py_DECREF(message);
        }
        PyErr_Clear();
    }
    return PyObject_CallOneArg(args[1], data);
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *zero, *uuid_type, *safe_unknown;
    if (!PyArg_ParseTuple(args, "OOO", &zero, &uuid_type, &safe_unknown))
        return NULL;
    if (!PyType_Check(uuid_type)) {
        PyErr_SetString(PyExc_TypeError, "the UUID type");
        return NULL;
    }
    Py_XSETREF(ZERO_UUID, Py_NewRef(zero));
    Py_XSETREF(UUID_TYPE, Py_NewRef(uuid_type));
    Py_XSETREF(SAFE_UNKNOWN, Py_NewRef(safe_unknown));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"decode_from", (PyCFunction)(void (*)(void))decode_from, METH_FASTCALL | METH_KEYWORDS,
     "decode_from(program, fallback, data, pos, mv=None) -> (message, end)"},
    {"decode", (PyCFunction)(void (*)(void))decode, METH_FASTCALL,
     "decode(program, fallback, data) -> message (exactly one, from bytes)"},
    {"configure", configure, METH_VARARGS, "configure(zero_uuid, uuid_type, safe_unknown)"},
    {NULL, NULL, 0, NULL}
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_decode", "kafkamock's compiled message decoder (see decode_program.py).", -1, methods
};

PyMODINIT_FUNC
PyInit__decode(void)
{
    STR_INT = PyUnicode_InternFromString("int");
    STR_IS_SAFE = PyUnicode_InternFromString("is_safe");
    EMPTY_TUPLE = PyTuple_New(0);
    if (STR_INT == NULL || STR_IS_SAFE == NULL || EMPTY_TUPLE == NULL)
        return NULL;
    return PyModule_Create(&module);
}
