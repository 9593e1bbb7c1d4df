/*
 * Tests of the profiling API declarations and the COM objects built on them.
 *
 * Slot counts are pinned to numbers counted from corprof.idl and cor.h (and
 * checked against the runtime's MIDL-generated corprof.h): a method added,
 * dropped or moved in our lists changes a count or an index and fails here
 * before it corrupts memory in a real process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "agent/profiler.h"
#include "clr/clr_defaults.h"
#include "clr/clr_guids.h"
#include "clr/clr_interfaces.h"
#include "common/product.h"
#include "test.h"

HRESULT DllGetClassObject(REFCLSID rclsid, REFIID riid, void **out);

/* cumulative slots (IUnknown's 3 included) after each interface version */
static const unsigned callback_slots[12] = {3, 72, 80, 83, 89, 90, 91, 92, 94, 95, 97, 98};
static const unsigned info_slots[16] = {3,  36, 57, 71, 81,  83,  84,  87,
                                        90, 93, 99, 101, 108, 111, 114, 115};

static unsigned slots_up_to(const unsigned char *versions, unsigned count, unsigned v)
{
    unsigned n = 0;
    for (unsigned i = 0; i < count; i++)
        n += versions[i] <= v;
    return n;
}

static void test_slot_counts_per_version(void)
{
    CHECK_EQ(clr_callback_slot_count, sizeof(ICorProfilerCallback11Vtbl) / sizeof(void *));
    CHECK_EQ(clr_info_slot_count, sizeof(ICorProfilerInfo15Vtbl) / sizeof(void *));
    for (unsigned v = 0; v <= 11; v++)
        CHECK_EQ(slots_up_to(clr_callback_slot_versions, clr_callback_slot_count, v),
                 callback_slots[v]);
    for (unsigned v = 0; v <= 15; v++)
        CHECK_EQ(slots_up_to(clr_info_slot_versions, clr_info_slot_count, v), info_slots[v]);
    /* versions appear in order: a method listed under the wrong version
     * would reorder the vtable */
    for (unsigned i = 1; i < clr_callback_slot_count; i++)
        CHECK(clr_callback_slot_versions[i] >= clr_callback_slot_versions[i - 1]);
    for (unsigned i = 1; i < clr_info_slot_count; i++)
        CHECK(clr_info_slot_versions[i] >= clr_info_slot_versions[i - 1]);
    CHECK_EQ(sizeof(IMetaDataImportVtbl) / sizeof(void *), 65);
    CHECK_EQ(sizeof(IMetaDataImport2Vtbl) / sizeof(void *), 73);
    CHECK_EQ(sizeof(ICorProfilerThreadEnumVtbl) / sizeof(void *), 8);
    CHECK_EQ(sizeof(IClassFactoryVtbl) / sizeof(void *), 5);
}

#define SLOT(type, field) (offsetof(type, field) / sizeof(void *))

static void test_slots_we_call(void)
{
    /* indexes read off the MIDL-generated header, for every method corscope calls */
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, Initialize), 3);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, Shutdown), 4);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, ThreadCreated), 29);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, ThreadDestroyed), 30);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, ThreadAssignedToOSThread), 31);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, ThreadNameChanged), 72);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetThreadInfo), 12);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetModuleInfo), 20);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetModuleMetaData), 21);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, DoStackSnapshot), 36);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetFunctionInfo2), 38);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetRuntimeInformation), 67);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, InitializeCurrentThread), 72);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, SetEventMask2), 82);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, IsFunctionDynamic), 87);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetDynamicFunctionInfo), 89);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, SuspendRuntime), 97);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, ResumeRuntime), 98);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, SetEnvironmentVariable), 100);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, GetTypeDefProps), 12);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, GetMethodProps), 30);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, GetNestedClassProps), 62);
}

static void test_slot_names(void)
{
    CHECK_STR(clr_callback_slot_names[0], "QueryInterface");
    CHECK_STR(clr_callback_slot_names[3], "Initialize");
    CHECK_STR(clr_callback_slot_names[clr_callback_slot_count - 1], "LoadAsNotificationOnly");
    CHECK_STR(clr_info_slot_names[clr_info_slot_count - 1], "EnumerateGCHeapObjects");
}

static int parse_guid(const char *s, GUID *g)
{
    unsigned d[11];
    if (sscanf(s, "{%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x}", &d[0], &d[1], &d[2], &d[3], &d[4],
               &d[5], &d[6], &d[7], &d[8], &d[9], &d[10]) != 11)
        return -1;
    g->Data1 = d[0];
    g->Data2 = (uint16_t)d[1];
    g->Data3 = (uint16_t)d[2];
    for (int i = 0; i < 8; i++)
        g->Data4[i] = (uint8_t)d[3 + i];
    return 0;
}

static void test_clsid_forms_agree(void)
{
    GUID parsed, built = CORSCOPE_CLSID_INIT;
    REQUIRE(parse_guid(CORSCOPE_CLSID_STRING, &parsed) == 0);
    CHECK(clr_guid_equal(&parsed, &built));
}

static void *const poison = (void *)(uintptr_t)0xdeadbeef;

static void test_class_factory(void)
{
    GUID clsid = CORSCOPE_CLSID_INIT, other = clsid;
    other.Data1 ^= 1;
    void *out = poison;
    CHECK_EQ(DllGetClassObject(&other, &IID_IClassFactory, &out), CLASS_E_CLASSNOTAVAILABLE);
    CHECK(out == NULL);
    out = poison;
    CHECK_EQ(DllGetClassObject(&clsid, &IID_ICorProfilerCallback3, &out), E_NOINTERFACE);
    CHECK(out == NULL);
    IClassFactory *factory = poison;
    REQUIRE(DllGetClassObject(&clsid, &IID_IClassFactory, (void **)&factory) == S_OK);
    REQUIRE(factory != poison && factory != NULL);

    out = poison;
    CHECK_EQ(factory->lpVtbl->CreateInstance(factory, (IUnknown *)factory,
                                             &IID_ICorProfilerCallback2, &out),
             CLASS_E_NOAGGREGATION);
    CHECK(out == NULL);
    out = poison;
    CHECK_EQ(factory->lpVtbl->CreateInstance(factory, NULL, &IID_IClassFactory, &out),
             E_NOINTERFACE);
    CHECK(out == NULL);

    /* the runtime's own sequence: version 2 from the factory, then 11..3 */
    ICorProfilerCallback11 *cb = poison;
    REQUIRE(factory->lpVtbl->CreateInstance(factory, NULL, &IID_ICorProfilerCallback2,
                                            (void **)&cb) == S_OK);
    REQUIRE(cb != poison);
    CHECK_EQ(cb->lpVtbl->AddRef(cb), 2);
    CHECK_EQ(cb->lpVtbl->Release(cb), 1);
    cb->lpVtbl->Release(cb);
}

static void test_profiler_query_interface(void)
{
    ICorProfilerCallback11 *cb = profiler_create();
    REQUIRE(cb);
    /* every callback version and IUnknown: same object, one more reference */
    for (int v = 0; v <= 11; v++) {
        void *out = poison;
        CHECK_EQ(cb->lpVtbl->QueryInterface(cb, clr_callback_iids[v], &out), S_OK);
        CHECK(out == cb);
        CHECK_EQ(cb->lpVtbl->Release(cb), 1);
    }
    static const GUID *const not_ours[] = {&IID_IClassFactory, &IID_ICorProfilerInfo,
                                           &IID_ICorProfilerInfo15, &IID_IMetaDataImport};
    for (size_t i = 0; i < sizeof not_ours / sizeof not_ours[0]; i++) {
        void *out = poison;
        CHECK_EQ(cb->lpVtbl->QueryInterface(cb, not_ours[i], &out), E_NOINTERFACE);
        CHECK(out == NULL);
    }
    CHECK_EQ(cb->lpVtbl->QueryInterface(cb, &IID_IUnknown, NULL), E_POINTER);
    /* callbacks corscope does not implement answer S_OK and do nothing */
    CHECK_EQ(cb->lpVtbl->GarbageCollectionFinished(cb), S_OK);
    CHECK_EQ(cb->lpVtbl->LoadAsNotificationOnly(cb, NULL), S_OK);
    /* Shutdown without Initialize is harmless */
    CHECK_EQ(cb->lpVtbl->Shutdown(cb), S_OK);
    CHECK_EQ(cb->lpVtbl->Release(cb), 0);
}

static void test_guid_tables(void)
{
    CHECK(clr_guid_equal(clr_callback_iids[0], &IID_IUnknown));
    CHECK(clr_guid_equal(clr_callback_iids[3], &IID_ICorProfilerCallback3));
    CHECK(clr_guid_equal(clr_info_iids[15], &IID_ICorProfilerInfo15));
    /* all distinct */
    for (int i = 0; i <= 11; i++)
        for (int j = 0; j < i; j++)
            CHECK(!clr_guid_equal(clr_callback_iids[i], clr_callback_iids[j]));
    for (int i = 1; i <= 15; i++)
        for (int j = 1; j < i; j++)
            CHECK(!clr_guid_equal(clr_info_iids[i], clr_info_iids[j]));
    /* a value read off corprof.idl */
    GUID cb3;
    REQUIRE(parse_guid("{4FD2ED52-7731-4B8D-9469-03D2CC3086C5}", &cb3) == 0);
    CHECK(clr_guid_equal(&cb3, &IID_ICorProfilerCallback3));
}

static void test_async_slots(void)
{
    /* read off cor.h and corprof.h */
    CHECK_EQ(SLOT(IMetaDataEmitVtbl, GetTokenFromSig), 23);
    CHECK_EQ(SLOT(IMetaDataEmitVtbl, DeleteToken), 29);
    CHECK_EQ(SLOT(ICorProfilerFunctionControlVtbl, SetILFunctionBody), 4);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, GetReJITParameters), 84);
    CHECK_EQ(SLOT(ICorProfilerCallback11Vtbl, ReJITError), 86);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, GetILFunctionBody), 22);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, RequestReJIT), 73);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, RequestRevert), 74);
    CHECK_EQ(SLOT(ICorProfilerInfo15Vtbl, RequestReJITWithInliners), 96);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, FindTypeDefByName), 9);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, EnumMethodsWithName), 19);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, GetClassLayout), 37);
    CHECK_EQ(SLOT(IMetaDataImportVtbl, GetSigFromToken), 41);
}

void suite_clr(void)
{
    RUN(test_async_slots);
    RUN(test_slot_counts_per_version);
    RUN(test_slots_we_call);
    RUN(test_slot_names);
    RUN(test_clsid_forms_agree);
    RUN(test_class_factory);
    RUN(test_profiler_query_interface);
    RUN(test_guid_tables);
}
