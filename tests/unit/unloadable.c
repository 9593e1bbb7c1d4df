/*
 * unloadable: a shared library the unit tests load and unload (built
 * stripped: only its exported symbols name its code, as in a library
 * shipped without a symbol table).  See test_review.c.
 */
__attribute__((visibility("default"), noinline)) int unloadable_work(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += i * 3 + (s >> 2);
    return s;
}
