/*
 * interlocked_ref: see interlocked_ref.h.
 */
#include "agent/trace/interlocked_ref.h"

#include <string.h>

#include "agent/mdplace.h"
#include "clr/clr_guids.h"
#include "common/utf.h"

/* Interlocked.Add(ref long, long): default calling convention, 2
 * parameters, returns int64; int64&, int64. */
static const uint8_t add_sig[] = {0x00, 0x02, 0x0a, 0x10, 0x0a, 0x0a};

/* CoreLib's own MethodDef of Interlocked.Add, 0 when not found. */
static uint32_t corelib_add(ICorProfilerInfo15 *info, ModuleID module)
{
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, ofRead, &IID_IMetaDataImport, &unk) < 0 || !unk)
        return 0;
    IMetaDataImport *import = (IMetaDataImport *)unk;
    WCHAR type_name[64], method_name[8];
    utf8_to_utf16("System.Threading.Interlocked", type_name, 64);
    utf8_to_utf16("Add", method_name, 8);
    mdToken type = 0, method = 0;
    if (import->lpVtbl->FindTypeDefByName(import, type_name, 0, &type) < 0 ||
        import->lpVtbl->FindMethod(import, type, method_name, add_sig, sizeof add_sig, &method) < 0)
        method = 0;
    import->lpVtbl->Release(import);
    return method;
}

/* Another module's MemberRef of Interlocked.Add (through a new AssemblyRef
 * to System.Private.CoreLib), 0 when the emitter refused. */
static uint32_t referenced_add(ICorProfilerInfo15 *info, ModuleID module)
{
    IUnknown *unk = NULL;
    if (mdplace_runtime_metadata(info, module, ofRead | ofWrite, &IID_IMetaDataEmit, &unk) < 0 ||
        !unk)
        return 0;
    IMetaDataEmit *emit = (IMetaDataEmit *)unk;
    IMetaDataAssemblyEmit *assembly = NULL;
    mdToken method = 0;
    if (emit->lpVtbl->QueryInterface(emit, &IID_IMetaDataAssemblyEmit, (void **)&assembly) >= 0 &&
        assembly) {
        static const uint8_t key_token[8] = {0x7c, 0xec, 0x85, 0xd7, 0xbe, 0xa7, 0x79, 0x8e};
        WCHAR corelib[32], type_name[64], method_name[8];
        utf8_to_utf16("System.Private.CoreLib", corelib, 32);
        utf8_to_utf16("System.Threading.Interlocked", type_name, 64);
        utf8_to_utf16("Add", method_name, 8);
        ASSEMBLYMETADATA version; /* 0.0.0.0: any CoreLib satisfies it */
        memset(&version, 0, sizeof version);
        mdToken ref = 0, type = 0;
        if (assembly->lpVtbl->DefineAssemblyRef(assembly, key_token, sizeof key_token, corelib,
                                                &version, NULL, 0, 0, &ref) < 0 ||
            emit->lpVtbl->DefineTypeRefByName(emit, ref, type_name, &type) < 0 ||
            emit->lpVtbl->DefineMemberRef(emit, type, method_name, add_sig, sizeof add_sig,
                                          &method) < 0)
            method = 0;
        assembly->lpVtbl->Release(assembly);
    }
    emit->lpVtbl->Release(emit);
    return method;
}

uint32_t interlocked_add_token(ICorProfilerInfo15 *info, ModuleID module, int corelib)
{
    return corelib ? corelib_add(info, module) : referenced_add(info, module);
}
