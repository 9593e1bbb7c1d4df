/*
 * out_coverage_json: coverage as JSON, in coverlet's layout (so that what
 * reads coverlet's coverage.json reads ours):
 *   { "Assembly.dll": { "/path/File.cs": { "Namespace.Type": {
 *       "ReturnType Namespace.Type::Method(Args)": {
 *         "Lines": { "12": 3, ... },
 *         "Branches": [ { "Line", "Offset", "EndOffset", "Path", "Ordinal", "Hits" } ] } } } } }
 * EndOffset is ours: the branch's path number again (coverlet gives the
 * offset its path lands on).
 */
#include "cli/cover_out.h"
#include "cli/json.h"

int cover_write_json(const struct covdata *d, FILE *out)
{
    fputs("{", out);
    int first_asm = 1;
    for (uint32_t a = 0; a < d->assembly_count; a++) {
        const struct covdata_assembly *da = &d->assemblies[a];
        if (da->state != 0 && da->state != 1)
            continue;
        char name[600];
        snprintf(name, sizeof name, "%s.dll", da->name);
        fputs(first_asm ? "\n  " : ",\n  ", out);
        first_asm = 0;
        json_string(out, name);
        fputs(": {", out);
        int first_file = 1;
        for (uint32_t fi = 0; fi < d->file_count; fi++) {
            const struct covdata_file *f = &d->files[fi];
            if (f->assembly != a)
                continue;
            fputs(first_file ? "\n    " : ",\n    ", out);
            first_file = 0;
            json_string(out, f->path);
            fputs(": {", out);
            int first_class = 1;
            for (uint32_t c = 0; c < d->class_count; c++) {
                if (d->classes[c].file != fi)
                    continue;
                fputs(first_class ? "\n      " : ",\n      ", out);
                first_class = 0;
                json_string(out, d->classes[c].name);
                fputs(": {", out);
                int first_method = 1;
                for (uint32_t m = 0; m < d->method_count; m++) {
                    const struct covdata_method *dm = &d->methods[m];
                    if (dm->klass != c || !dm->counts.lines)
                        continue;
                    char key[1500];
                    snprintf(key, sizeof key, "%s::%s%s", d->classes[c].name, dm->name, dm->signature);
                    fputs(first_method ? "\n        " : ",\n        ", out);
                    first_method = 0;
                    json_string(out, key);
                    fputs(": {\n          \"Lines\": {", out);
                    int first_line = 1;
                    for (uint32_t i = 0; i < f->line_count; i++) {
                        if (f->lines[i].method != m)
                            continue;
                        fprintf(out, "%s\"%u\": %llu", first_line ? "" : ", ", f->lines[i].line,
                                (unsigned long long)f->lines[i].hits);
                        first_line = 0;
                    }
                    fputs("},\n          \"Branches\": [", out);
                    uint32_t ordinal = 0;
                    for (uint32_t i = 0; i < f->branch_count; i++) {
                        const struct covdata_branch *b = &f->branches[i];
                        if (b->method != m)
                            continue;
                        fprintf(out,
                                "%s\n            {\"Line\": %u, \"Offset\": %u, \"EndOffset\": %u, "
                                "\"Path\": %u, \"Ordinal\": %u, \"Hits\": %llu}",
                                ordinal ? "," : "", b->line, b->il_offset, b->path, b->path, ordinal,
                                (unsigned long long)b->hits);
                        ordinal++;
                    }
                    fputs(ordinal ? "\n          ]\n        }" : "]\n        }", out);
                }
                fputs(first_method ? "}" : "\n      }", out);
            }
            fputs(first_class ? "}" : "\n    }", out);
        }
        fputs(first_file ? "}" : "\n  }", out);
    }
    fputs(first_asm ? "}\n" : "\n}\n", out);
    return ferror(out) ? -1 : 0;
}
