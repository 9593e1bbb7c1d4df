/*
 * Tests of mdplace (agent/mdplace.h) and pe_open_loaded (common/pdb/pe.h):
 * an assembly's metadata read in place from an image laid out as the
 * runtime loads it, flat (the file's bytes) and mapped (each section at
 * its RVA), gives every method the name and declaring type that coverage's
 * independent reader of the file (common/pdb/assembly.h) gives it; types
 * are found by name, nested ones in their enclosing type; fields are
 * named; images that cannot be read in place are refused, not misread.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/mdplace.h"
#include "common/pdb/assembly.h"
#include "common/pdb/pe.h"
#include "fixture.h"
#include "test.h"

#define DLL "tests/unit/data/CoverLib.dll"

/* The image as the loader maps it: headers, then each section's file
 * bytes at its RVA. */
static uint8_t *mapped_layout(const uint8_t *file, size_t size)
{
    struct pe_image pe;
    const char *why;
    if (pe_open(&pe, file, size, &why) < 0)
        return NULL;
    size_t extent = 4096;
    for (uint32_t i = 0; i < pe.section_count; i++) {
        const struct pe_section *s = &pe.sections[i];
        size_t end = (size_t)s->va + (s->vsize > s->raw_size ? s->vsize : s->raw_size);
        if (end > extent)
            extent = end;
    }
    uint8_t *image = calloc(1, extent);
    if (!image)
        return NULL;
    memcpy(image, file, size < 4096 ? size : 4096);
    for (uint32_t i = 0; i < pe.section_count; i++) {
        const struct pe_section *s = &pe.sections[i];
        memcpy(image + s->va, file + s->raw, s->raw_size);
    }
    return image;
}

static void check_against_file(const struct md *md, const struct assembly *a)
{
    CHECK_EQ(md_rows(md, MD_METHODDEF), a->method_count);
    uint32_t generic = 0;
    for (uint32_t row = 1; row <= a->method_count; row++) {
        char name[200], type[200], expected[200];
        uint32_t arity = 99;
        mdTypeDef owner = 0;
        REQUIRE(mdplace_method(md, md_token(MD_METHODDEF, row), name, sizeof name, &arity,
                               &owner) == 0);
        CHECK_STR(name, assembly_method_name(a, row));
        CHECK_EQ(owner, md_token(MD_TYPEDEF, a->methods[row - 1].type));
        mdplace_type_name(md, owner, type, sizeof type);
        assembly_type_name(a, a->methods[row - 1].type, expected, sizeof expected);
        CHECK_STR(type, expected);
        generic += arity != 0;
    }
    CHECK(generic > 0); /* Queries' generic methods */
}

static int refuse_all(const uint8_t *sig, uint32_t len, void *ctx)
{
    (void)sig;
    (void)len;
    ++*(int *)ctx;
    return 0;
}

static int instance_method(const uint8_t *sig, uint32_t len, void *ctx)
{
    (void)ctx;
    return len > 0 && (sig[0] & 0x20);
}

static void test_in_place_layouts(void)
{
    size_t size;
    uint8_t *file = fixture_read_file(DLL, &size);
    REQUIRE(file);
    struct assembly a;
    char why[256];
    REQUIRE(assembly_open(&a, DLL, why, sizeof why) == 0);
    uint8_t *mapped = mapped_layout(file, size);
    REQUIRE(mapped);

    struct md flat_md, mapped_md;
    REQUIRE(mdplace_open_image(file, COR_PRF_MODULE_DISK | COR_PRF_MODULE_FLAT_LAYOUT,
                               &flat_md) == 0);
    REQUIRE(mdplace_open_image(mapped, COR_PRF_MODULE_DISK, &mapped_md) == 0);
    check_against_file(&flat_md, &a);
    check_against_file(&mapped_md, &a);
    /* the wrong layout for the bytes finds no metadata where it looks, or
     * other bytes: never the names above by accident */
    struct md wrong;
    if (mdplace_open_image(mapped, COR_PRF_MODULE_FLAT_LAYOUT, &wrong) == 0)
        CHECK(md_rows(&wrong, MD_METHODDEF) != a.method_count ||
              wrong.strings.p != mapped_md.strings.p);

    /* types by name, nested ones inside their enclosing type */
    mdTypeDef box = mdplace_find_type(&mapped_md, "CoverLib.Box`1");
    CHECK(box != 0);
    char name[200];
    mdplace_type_name(&mapped_md, box, name, sizeof name);
    CHECK_STR(name, "CoverLib.Box`1");
    CHECK_EQ(mdplace_find_type(&mapped_md, "CoverLib.NoSuchType"), 0);
    CHECK_EQ(mdplace_find_type(&mapped_md, "Box`1"), 0); /* the namespace is part of it */
    mdTypeDef outer = mdplace_find_type(&mapped_md, "CoverLib.MoreAsync");
    REQUIRE(outer != 0);
    mdTypeDef resource = mdplace_find_nested(&mapped_md, outer, "Resource");
    REQUIRE(resource != 0);
    mdplace_type_name(&mapped_md, resource, name, sizeof name);
    CHECK_STR(name, "CoverLib.MoreAsync+Resource");
    CHECK_EQ(mdplace_find_nested(&mapped_md, box, "Resource"), 0);
    /* methods by name in their type */
    mdMethodDef add = mdplace_find_method(&mapped_md, box, "Add", NULL, NULL);
    REQUIRE(add != 0);
    uint32_t add_arity = 9;
    mdTypeDef add_owner = 0;
    REQUIRE(mdplace_method(&mapped_md, add, name, sizeof name, &add_arity, &add_owner) == 0);
    CHECK_STR(name, "Add");
    CHECK_EQ(add_owner, box);
    CHECK_EQ(mdplace_find_method(&mapped_md, box, "NoSuchMethod", NULL, NULL), 0);
    CHECK_EQ(mdplace_find_method(&mapped_md, resource, "Add", NULL, NULL), 0);
    CHECK(mdplace_find_method(&mapped_md, resource, "DisposeAsync", NULL, NULL) != 0);
    CHECK_EQ(mdplace_find_method(&mapped_md, md_token(MD_TYPEDEF, 0), "Add", NULL, NULL), 0);
    CHECK_EQ(mdplace_find_type(&mapped_md, "CoverLib.Resource"), 0); /* nested: not top level */
    /* by signature too: the filter sees each same-named method's blob */
    int seen = 0;
    CHECK_EQ(mdplace_find_method(&mapped_md, box, "Add", refuse_all, &seen), 0);
    CHECK_EQ(seen, 1);
    CHECK_EQ(mdplace_find_method(&mapped_md, box, "Add", instance_method, NULL), add);

    /* fields: Box`1's list of items */
    int found = 0;
    for (uint32_t row = 1; row <= md_rows(&mapped_md, MD_FIELD); row++)
        found += !strcmp(mdplace_field_name(&mapped_md, md_token(MD_FIELD, row)), "items");
    CHECK_EQ(found, 1);
    CHECK_STR(mdplace_field_name(&mapped_md, md_token(MD_FIELD, 0)), "");
    CHECK_STR(mdplace_field_name(&mapped_md, md_token(MD_METHODDEF, 1)), "");

    /* tokens that name no method */
    uint32_t arity;
    mdTypeDef owner;
    CHECK(mdplace_method(&mapped_md, md_token(MD_METHODDEF, 0), name, sizeof name, &arity,
                         &owner) < 0);
    CHECK(mdplace_method(&mapped_md, md_token(MD_METHODDEF, a.method_count + 1), name,
                         sizeof name, &arity, &owner) < 0);
    CHECK(mdplace_method(&mapped_md, md_token(MD_TYPEDEF, 1), name, sizeof name, &arity,
                         &owner) < 0);
    assembly_close(&a);
    free(mapped);
    free(file);
}

static void test_refused(void)
{
    size_t size;
    uint8_t *file = fixture_read_file(DLL, &size);
    REQUIRE(file);
    struct md md;
    /* modules the runtime must be asked about */
    CHECK(mdplace_open_image(NULL, COR_PRF_MODULE_FLAT_LAYOUT, &md) < 0);
    CHECK(mdplace_open_image(file, COR_PRF_MODULE_FLAT_LAYOUT | COR_PRF_MODULE_DYNAMIC, &md) < 0);
    CHECK(mdplace_open_image(file, COR_PRF_MODULE_FLAT_LAYOUT | COR_PRF_MODULE_RESOURCE, &md) <
          0);
    /* damaged headers: refused, nothing read past the header page */
    uint8_t *copy = malloc(size);
    REQUIRE(copy);
    memcpy(copy, file, size);
    copy[0] = 'X';
    CHECK(mdplace_open_image(copy, COR_PRF_MODULE_FLAT_LAYOUT, &md) < 0);
    memcpy(copy, file, size);
    uint32_t far = PE_LOADED_HEADERS; /* e_lfanew past the headers' page */
    memcpy(copy + 0x3c, &far, 4);
    CHECK(mdplace_open_image(copy, COR_PRF_MODULE_FLAT_LAYOUT, &md) < 0);
    free(copy);
    /* the file's bytes with only the headers' page left mapped (a layout
     * told wrong, a module torn down): neither the CLI header nor the
     * metadata in the hole behind it is read (a read would fault) */
    long page = sysconf(_SC_PAGESIZE);
    size_t span = (size + 16 * (size_t)page) & ~(size_t)(page - 1);
    uint8_t *image = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(image != MAP_FAILED);
    memcpy(image, file, size);
    REQUIRE(munmap(image + page, span - (size_t)page) == 0);
    CHECK(mdplace_open_image(image, COR_PRF_MODULE_FLAT_LAYOUT, &md) < 0);
    CHECK(mdplace_open_image(image, COR_PRF_MODULE_DISK, &md) < 0);
    munmap(image, (size_t)page);
    /* a hole of one page inside the metadata (mapped before and after it)
     * is found too: the check covers the whole range, not its ends */
    image = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(image != MAP_FAILED);
    memcpy(image, file, size);
    REQUIRE(mdplace_open_image(image, COR_PRF_MODULE_FLAT_LAYOUT, &md) == 0);
    struct pe_image pe;
    const char *why;
    REQUIRE(pe_open_loaded(&pe, image, 1, NULL, &why) == 0);
    uintptr_t md_end = (uintptr_t)pe.metadata + pe.metadata_size;
    uintptr_t middle = ((uintptr_t)pe.metadata + pe.metadata_size / 2) & ~(uintptr_t)(page - 1);
    REQUIRE(middle > (uintptr_t)pe.metadata && middle + (uintptr_t)page < md_end);
    REQUIRE(munmap((void *)middle, (size_t)page) == 0);
    CHECK(mdplace_open_image(image, COR_PRF_MODULE_FLAT_LAYOUT, &md) < 0);
    munmap(image, span);
    free(file);
}

void suite_mdplace(void)
{
    RUN(test_in_place_layouts);
    RUN(test_refused);
}
