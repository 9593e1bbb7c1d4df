/*
 * entry: how the runtime finds us.  It dlopens libcorscope.so, calls the one
 * exported function, DllGetClassObject, for corscope's class id and
 * IClassFactory, and asks the factory for a profiler object.  The factory is
 * a static object: its reference count is meaningless and kept at 1.
 */
#include "agent/profiler.h"
#include "clr/clr_guids.h"
#include "common/product.h"
#include "common/visibility.h"

static const GUID clsid_corscope = CORSCOPE_CLSID_INIT;

static HRESULT STDMETHODCALLTYPE factory_QueryInterface(IClassFactory *iface, REFIID riid, void **out)
{
    if (!out)
        return E_POINTER;
    if (clr_guid_equal(riid, &IID_IUnknown) || clr_guid_equal(riid, &IID_IClassFactory)) {
        *out = iface;
        return S_OK;
    }
    *out = NULL;
    return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE factory_AddRef(IClassFactory *iface)
{
    (void)iface;
    return 1;
}

static ULONG STDMETHODCALLTYPE factory_Release(IClassFactory *iface)
{
    (void)iface;
    return 1;
}

static HRESULT STDMETHODCALLTYPE factory_CreateInstance(IClassFactory *iface, IUnknown *outer,
                                                        REFIID riid, void **out)
{
    (void)iface;
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (outer)
        return CLASS_E_NOAGGREGATION;
    ICorProfilerCallback11 *profiler = profiler_create();
    if (!profiler)
        return E_OUTOFMEMORY;
    HRESULT hr = profiler->lpVtbl->QueryInterface(profiler, riid, out);
    profiler->lpVtbl->Release(profiler);
    return hr;
}

static HRESULT STDMETHODCALLTYPE factory_LockServer(IClassFactory *iface, BOOL lock)
{
    (void)iface;
    (void)lock;
    return S_OK;
}

static const IClassFactoryVtbl factory_vtbl = {
    factory_QueryInterface, factory_AddRef, factory_Release, factory_CreateInstance,
    factory_LockServer,
};

static IClassFactory factory = {&factory_vtbl};

EXPORT HRESULT DllGetClassObject(REFCLSID rclsid, REFIID riid, void **out);

HRESULT DllGetClassObject(REFCLSID rclsid, REFIID riid, void **out)
{
    if (!out)
        return E_POINTER;
    *out = NULL;
    if (!clr_guid_equal(rclsid, &clsid_corscope))
        return CLASS_E_CLASSNOTAVAILABLE;
    return factory.lpVtbl->QueryInterface(&factory, riid, out);
}
